"""Reading what one may not through the people's API and pages (helper "adv-web"): sealed
reference bytes before unseal (also to a manager of another problem), another participant's
submission under independent entry, a hidden check's code, and another reviewer's materials or
response before the node settles. Each refusal's body holds none of the protected bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from tests.adversarial.web_attacks import SEALED, api, login, site
from tests.platform.conftest import make_problem
from tests.web.conftest import ESSAY, PRIVATE_SECRET, Site

__all__ = ["api", "site"]

HIDDEN_SECRET = "HIDDEN-CHECK-SECRET-9c1e"
RATIONALE = "RATIONALE-OF-REV1-4b2d: the chain argument is right."


@pytest.mark.parametrize("user", ["alice", "rev1", "nobody", "mgr2"])
@pytest.mark.parametrize(
    ("problem", "key", "secret"),
    [("sat-small", "held-out", SEALED[:40]), ("private", "expected", PRIVATE_SECRET.encode())],
)
def test_sealed_bytes_go_to_no_one_but_the_problem_s_managers(
    api: TestClient, site: Site, user: str, problem: str, key: str, secret: bytes
) -> None:
    url = f"/problems/{problem}/references/{key}"
    answer = api.get("/v1" + url, headers=site.auth(user))
    assert answer.status_code == 403 and secret not in answer.content
    head = api.head("/v1" + url, headers=site.auth(user))
    assert head.status_code in (403, 405) and secret not in head.content
    with TestClient(site.app) as client:
        login(client, site, user)
        page = client.get(url)
        assert page.status_code == 403 and secret not in page.content


@pytest.fixture(scope="module")
def private_submission(api: TestClient, site: Site) -> str:
    answer = api.post(
        "/v1/problems/private/submissions",
        headers=site.auth("alice"),
        files=[("answer", ("a", b"ALICE-PRIVATE-ANSWER 42"))],
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["submission"])


@pytest.mark.parametrize("user", ["bob", "rev1", "nobody", "mgr2"])
def test_another_participant_s_independent_entry_is_not_found(
    api: TestClient, site: Site, private_submission: str, user: str
) -> None:
    unknown = api.get("/v1/submissions/s-0000000000000000", headers=site.auth(user))
    for path in ("", "/review"):
        answer = api.get(f"/v1/submissions/{private_submission}{path}", headers=site.auth(user))
        assert answer.status_code in (403, 404)
        assert b"ALICE-PRIVATE-ANSWER" not in answer.content and b"alice" not in answer.content
    shown = api.get(f"/v1/submissions/{private_submission}", headers=site.auth(user))
    assert (shown.status_code, shown.content) == (unknown.status_code, unknown.content)
    recheck = api.post(f"/v1/submissions/{private_submission}/recheck", headers=site.auth(user))
    assert recheck.status_code in (403, 404) and b"alice" not in recheck.content
    with TestClient(site.app) as client:
        login(client, site, user)
        page = client.get(f"/submissions/{private_submission}")
        assert page.status_code == 404 and "ALICE-PRIVATE-ANSWER" not in page.text


@pytest.fixture(scope="module")
def hidden(site: Site, tmp_path_factory: pytest.TempPathFactory) -> str:
    contract = {
        "roles": [{"name": "answer", "required": True, "max_bytes": 1024}],
        "references": [],
        "acceptance": "The answer is the hidden one.",
        "stages": [
            {
                "name": "hidden",
                "type": "sandbox",
                "checks": [
                    {
                        "kind": "hidden_python",
                        "code": f"assert open('answer').read().strip() == '{HIDDEN_SECRET}', "
                        f"'not {HIDDEN_SECRET[:6]}'\n",
                    }
                ],
            }
        ],
    }
    folder = make_problem(Path(tmp_path_factory.mktemp("hid")), problem="hid", contract=contract)
    with Platform.open(site.config) as platform:
        platform.publish(folder, "mgr")
    return "hid"


@pytest.mark.parametrize("answer_text", [b"nope", b"", b"\xff\xfe", b"HIDDEN"])
def test_a_hidden_check_s_code_reaches_no_participant(
    api: TestClient, site: Site, hidden: str, answer_text: bytes
) -> None:
    auth = site.auth("bob")
    seen = [api.get(f"/v1/problems/{hidden}", headers=auth).text]
    run = api.post(
        f"/v1/problems/{hidden}/submissions",
        headers=auth,
        files=[("answer", ("a", answer_text))],
    )
    seen.append(run.text)
    if run.status_code == 201:
        assert run.json()["status"] != "verified"
        seen.append(api.get(f"/v1/submissions/{run.json()['submission']}", headers=auth).text)
    with TestClient(site.app) as client:
        login(client, site, "bob")
        seen.append(client.get(f"/problems/{hidden}").text)
        if run.status_code == 201:
            seen.append(client.get(f"/submissions/{run.json()['submission']}").text)
    for text in seen:
        assert HIDDEN_SECRET not in text


@pytest.fixture(scope="module")
def answered_seat(api: TestClient, site: Site) -> tuple[str, str, str]:
    """An essay with rev1's response in; the panel has not settled."""
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    thesis = (ESSAY / "submissions" / "good" / "summary.txt").read_text().strip()
    run = api.post(
        "/v1/problems/reviewed-essay/submissions",
        headers=site.auth("bob"),
        files=[("essay", ("e", essay))],
        data={"summary": thesis},
    )
    assert run.status_code == 201, run.text
    sub = run.json()["submission"]
    seat = next(
        s["seat"]
        for s in api.get("/v1/seats", headers=site.auth("rev1")).json()["open"]
        if s["submission"] == sub
    )
    claimed = api.post(f"/v1/seats/{seat}/claim", headers=site.auth("rev1")).json()
    uri = claimed["materials"][0]["uri"]
    response = {
        "verdict": "fail",
        "rationale": RATIONALE,
        "citations": [uri],
        "confidence": 0.9,
        "assistance": [],
    }
    done = api.post(f"/v1/seats/{seat}/respond", headers=site.auth("rev1"), json=response)
    assert done.status_code == 200, done.text
    return sub, seat, uri


@pytest.mark.parametrize("user", ["rev2", "erin", "alice", "bob", "mgr2"])
def test_another_reviewer_s_response_stays_unseen_before_the_node_settles(
    api: TestClient, site: Site, answered_seat: tuple[str, str, str], user: str
) -> None:
    sub, seat, uri = answered_seat
    auth = site.auth(user)
    texts = [
        api.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=auth).text,
        api.get(f"/v1/submissions/{sub}", headers=auth).text,
        api.get(f"/v1/submissions/{sub}/review", headers=auth).text,
        api.get("/v1/seats", headers=auth).text,
    ]
    review_uri = f"assay://review/{seat}"
    texts.append(
        api.get(f"/v1/seats/{seat}/material", params={"uri": review_uri}, headers=auth).text
    )
    with TestClient(site.app) as client:
        login(client, site, user)
        texts.append(client.get("/review/seat", params={"id": seat}).text)
        texts.append(client.get(f"/submissions/{sub}").text)
        texts.append(client.get("/review/material", params={"seat": seat, "uri": uri}).text)
    for text in texts:
        assert RATIONALE not in text and "RATIONALE-OF-REV1" not in text
    material = api.get(f"/v1/seats/{seat}/material", params={"uri": uri}, headers=auth)
    assert material.status_code in (403, 404)  # no reviewer role: 403; not the holder: 404


@pytest.mark.parametrize("node", ["expert/1", "expert/0", "panel/4", "panel/1"])
def test_an_expert_gets_no_seat_and_no_report_before_the_panel_splits(
    api: TestClient, site: Site, answered_seat: tuple[str, str, str], node: str
) -> None:
    _, seat, _ = answered_seat
    guessed = seat.rsplit("/", 2)[0] + "/" + node
    claim = api.post(f"/v1/seats/{guessed}/claim", headers=site.auth("erin"))
    assert claim.status_code == 403 and "rev1" not in claim.text
    for uri in (f"assay://review/{seat}", f"assay://review/{seat}/response"):
        report = api.get(
            f"/v1/seats/{guessed}/material", params={"uri": uri}, headers=site.auth("erin")
        )
        assert report.status_code == 404 and "RATIONALE-OF-REV1" not in report.text


def test_an_answered_seat_takes_no_second_answer(
    api: TestClient, site: Site, answered_seat: tuple[str, str, str]
) -> None:
    _, seat, uri = answered_seat
    changed = {
        "verdict": "pass",
        "rationale": "changed my mind after seeing the others",
        "citations": [uri],
        "confidence": 1,
        "assistance": [],
    }
    answer = api.post(f"/v1/seats/{seat}/respond", headers=site.auth("rev1"), json=changed)
    assert answer.status_code == 422
