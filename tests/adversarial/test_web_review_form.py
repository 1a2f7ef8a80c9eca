"""The review page's form as a way to record what the reviewer did not say (helper
"adv-web"): a declaration "I was assisted" that reaches the ledger as "unassisted", numbers that
are not finite, a field given twice. The response schema and the declaration rules stay the
judge; the form must not turn one answer into another."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from tests.adversarial.web_attacks import api, csrf_of, login, newcomer, site
from tests.web.conftest import ESSAY, Site

__all__ = ["api", "site"]


@pytest.fixture
def seat(api: TestClient, site: Site, request: pytest.FixtureRequest) -> tuple[str, str]:
    """A fresh essay and a panel seat claimed by a fresh reviewer: (seat, the essay's uri)."""
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    thesis = (ESSAY / "submissions" / "good" / "summary.txt").read_text().strip()
    author = newcomer(site, f"author-{abs(hash(request.node.name)) % 10**8}")
    run = api.post(
        "/v1/problems/reviewed-essay/submissions",
        headers=author,
        files=[("essay", ("e", essay))],
        data={"summary": thesis},
    )
    assert run.status_code == 201, run.text
    sub = run.json()["submission"]
    name = f"rv-{abs(hash(request.node.name)) % 10**8}"
    with Platform.open(site.config) as platform:
        view = platform.reviews.add_user(name, ["reviewers"], "admin", ["reviewer"])
    assert view.token
    site.tokens[name] = view.token
    found = next(
        s["seat"]
        for s in api.get("/v1/seats", headers=site.auth(name)).json()["open"]
        if s["submission"] == sub
    )
    claimed = api.post(f"/v1/seats/{found}/claim", headers=site.auth(name))
    assert claimed.status_code == 200, claimed.text
    return found, claimed.json()["materials"][0]["uri"]


def _respond(site: Site, seat: tuple[str, str], fields: dict[str, Any]) -> tuple[int, Any]:
    """Post the seat's form as its holder; (status, the recorded response or None)."""
    seat_id, uri = seat
    holder = sorted((u for u in site.tokens if u.startswith("rv-")), key=list(site.tokens).index)[
        -1
    ]
    with TestClient(site.app) as client:
        login(client, site, holder)
        page = client.get("/review/seat", params={"id": seat_id})
        data = {
            "csrf": csrf_of(page.text),
            "seat": seat_id,
            "field.verdict": "pass",
            "field.rationale": "Correct and clear.",
            "field.citations": uri,
            "field.confidence": "0.8",
            **fields,
        }
        answer = client.post("/review/respond", data=data, follow_redirects=False)
    with Platform.open(site.config) as platform:
        found = [
            e.body
            for e in platform.ledger.find()
            if e.kind.startswith("review")
            and e.body.get("seat") == seat_id
            and "response" in json.dumps(e.body)
        ]
    return answer.status_code, found


@pytest.mark.parametrize(
    "declaration",
    [
        {"assisted": "yes", "agent": ["", "", ""], "agent_role": ["", "", ""]},
        {"assisted": "yes", "agent": ["gpt-helper"]},
        {"assisted": "yes", "agent_role": ["drafted the rationale"]},
    ],
    ids=["assisted, rows left blank", "an agent without its role", "a role without its agent"],
)
def test_a_declared_assistance_is_never_recorded_as_unassisted(
    site: Site, seat: tuple[str, str], declaration: dict[str, Any]
) -> None:
    status, recorded = _respond(site, seat, declaration)
    assert status == 422 and not recorded, (status, recorded)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "NaN", "0x1"])
def test_a_number_that_is_not_finite_is_refused(
    site: Site, seat: tuple[str, str], value: str
) -> None:
    status, recorded = _respond(site, seat, {"field.confidence": value, "assisted": "no"})
    assert status == 422 and not recorded, (status, recorded)
