"""Changing a verdict through the web without managing the problem (helper "adv-web"): a
re-check or a revocation by a participant, by the participant who owns the submission, or by a
manager of another problem (API and pages). A refused act records nothing; a revocation by
another problem's manager is recorded for their problems only and leaves this verdict as it
was."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tests.adversarial.web_attacks import GOOD, api, entries, login, site
from tests.web.conftest import Site

__all__ = ["api", "site"]


@pytest.fixture(scope="module")
def verified(api: TestClient, site: Site) -> dict:
    answer = api.post(
        "/v1/problems/sat-small/submissions",
        headers=site.auth("alice"),
        files=[("assignment", ("a", GOOD))],
    )
    assert answer.status_code == 201 and answer.json()["status"] == "verified", answer.text
    return dict(answer.json())


@pytest.mark.parametrize("user", ["alice", "bob", "rev1", "nobody", "mgr2"])
def test_a_recheck_by_someone_who_does_not_manage_the_problem_is_refused(
    api: TestClient, site: Site, verified: dict, user: str
) -> None:
    before = entries(site)
    sub = verified["submission"]
    answer = api.post(f"/v1/submissions/{sub}/recheck", headers=site.auth(user))
    assert answer.status_code == 403, answer.text
    with TestClient(site.app) as client:
        csrf = login(client, site, user)
        page = client.post(
            f"/submissions/{sub}/recheck", data={"csrf": csrf}, follow_redirects=False
        )
        assert page.status_code == 403
    assert entries(site) - before == 1  # the page login's session entry, nothing else


@pytest.mark.parametrize("user", ["alice", "rev1", "nobody"])
def test_a_revocation_without_the_manager_role_is_refused(
    api: TestClient, site: Site, user: str
) -> None:
    before = entries(site, "checker.revoked")
    body = {"checker": "assay:sat_assignment@0.1.0", "why": "I dislike my verdict"}
    assert api.post("/v1/revocations", headers=site.auth(user), json=body).status_code == 403
    with TestClient(site.app) as client:
        csrf = login(client, site, user)
        page = client.post("/manage/revoke", data={"csrf": csrf, **body}, follow_redirects=False)
        assert page.status_code == 403
    assert entries(site, "checker.revoked") == before


@pytest.mark.parametrize("via", ["api", "page"])
def test_another_problem_s_manager_cannot_revoke_this_verdict(
    api: TestClient, site: Site, verified: dict, via: str
) -> None:
    sub = verified["submission"]
    checkers = sorted({c for s in verified["stages"] for c in s["checkers"]})
    for checker in checkers:
        body = {"checker": checker, "why": f"mgr2 via {via}"}
        if via == "api":
            done = api.post("/v1/revocations", headers=site.auth("mgr2"), json=body)
            assert done.status_code == 200 and not done.json()["runs"]
        else:
            with TestClient(site.app) as client:
                csrf = login(client, site, "mgr2")
                page = client.post(
                    "/manage/revoke", data={"csrf": csrf, **body}, follow_redirects=False
                )
                assert page.status_code == 303
    for user in ("alice", "mgr"):
        shown = api.get(f"/v1/submissions/{sub}", headers=site.auth(user)).json()
        assert shown["verdict"]["standing"] == "verified", shown["verdict"]
        assert not any(r["revoked"] for r in shown["runs"])


def test_the_review_record_is_for_the_problem_s_managers_only(
    api: TestClient, site: Site, verified: dict
) -> None:
    sub = verified["submission"]
    for user in ("alice", "rev1", "mgr2"):
        answer = api.get(f"/v1/submissions/{sub}/review", headers=site.auth(user))
        assert answer.status_code in (403, 404)
    assert api.get(f"/v1/submissions/{sub}/review", headers=site.auth("mgr")).status_code == 200
