"""Campaign seats on the reviewer's pages (helper "adv-webarchive"): ``/review/seat`` and
``/review/respond`` send a seat whose first part is a campaign item to ``campaign_seat``, and any
other to the submission's review stage. Tried: answering a campaign seat nobody claimed, or one
another reviewer holds, through the page and the API; and seat ids spliced from a campaign seat
and a stage seat (a campaign item with a stage's run, stage and node; a submission with a
campaign's id), so that one path would vouch for a seat the other owns. Each is a 404 (or the
platform's refusal), with no response recorded and no material served."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from assay.review._records import RESPONDED
from tests.adversarial.campaign_attacks import audited, expert
from tests.adversarial.web_attacks import login, site_for
from tests.review.helpers import answer
from tests.web.conftest import ESSAY, Site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("campaign-seats")
    for found in site_for(tmp):
        with Platform.open(found.config) as platform:
            audited(platform, tmp, manager="mgr")
            work = tmp / "work.txt"
            work.write_text("alice's work")
            platform.submit("audited", {"doc": work}, "42", "alice")
            found.tokens["erin2"] = (
                platform.reviews.add_user("erin2", ["experts"], "admin", ["reviewer"]).token or ""
            )
        yield found


@pytest.fixture
def client(site: Site) -> Iterator[TestClient]:
    with TestClient(site.app, raise_server_exceptions=False) as fresh:
        yield fresh


def new_campaign(site: Site) -> str:
    """A fresh campaign over the audited runs: its one expert seat (open)."""
    with Platform.open(site.config) as platform:
        view = platform.reviews.campaigns.create(
            expert(1, submission=True), "runs:problem=audited,status=any", "mgr"
        )
        item = view.items[0].item
        return f"{item}/{view.campaign}/campaign/expert/1"


def responses(site: Site) -> int:
    with Platform.open(site.config) as platform:
        return len(platform.ledger.find(kind=RESPONDED))


def page_answer(client: TestClient, csrf: str, seat: str, cite: str = "assay://x") -> int:
    posted = client.post(
        "/review/respond",
        data={
            "csrf": csrf,
            "seat": seat,
            "field.verdict": "pass",
            "field.rationale": "Because.",
            "field.citations": cite,
            "field.confidence": "0.9",
            "assisted": "no",
        },
        follow_redirects=False,
    )
    return posted.status_code


def api_answer(client: TestClient, site: Site, user: str, seat: str) -> int:
    answered = client.post(
        f"/v1/seats/{quote(seat)}/respond",
        headers=site.auth(user),
        content=answer("pass", "assay://submission/doc"),
    )
    return answered.status_code


@pytest.mark.parametrize("who", ["erin", "rev1"], ids=["eligible", "not-eligible"])
def test_a_campaign_seat_nobody_claimed_takes_no_answer(
    client: TestClient, site: Site, who: str
) -> None:
    seat = new_campaign(site)
    before = responses(site)
    csrf = login(client, site, who)
    assert client.get(f"/review/seat?id={quote(seat, safe='')}").status_code == 404
    assert page_answer(client, csrf, seat) == 404
    assert api_answer(client, site, who, seat) in (403, 404, 422)
    assert responses(site) == before


def test_a_campaign_seat_another_reviewer_holds_takes_no_answer_from_you(
    client: TestClient, site: Site
) -> None:
    seat = new_campaign(site)
    claimed = client.post(f"/v1/seats/{quote(seat)}/claim", headers=site.auth("erin"))
    assert claimed.status_code == 200, claimed.text
    uri = claimed.json()["materials"][0]["uri"]
    before = responses(site)
    csrf = login(client, site, "erin2")
    assert client.get(f"/review/seat?id={quote(seat, safe='')}").status_code == 404
    material = client.get(f"/review/material?seat={quote(seat, safe='')}&uri={quote(uri)}")
    assert material.status_code == 404
    assert page_answer(client, csrf, seat) == 404
    assert api_answer(client, site, "erin2", seat) in (403, 404, 422)
    assert responses(site) == before
    # the holder sees it and answers it through the same form (the control)
    csrf = login(client, site, "erin")
    shown = client.get(f"/review/seat?id={quote(seat, safe='')}")
    assert shown.status_code == 200
    cite = re.search(r'name="field.citations" value="([^"]+)"', shown.text)
    assert cite, shown.text
    assert page_answer(client, csrf, seat, cite.group(1)) == 303
    assert responses(site) == before + 1


def test_a_seat_id_spliced_from_a_campaign_seat_and_a_stage_seat_is_no_one_s(
    client: TestClient, site: Site
) -> None:
    essay = (ESSAY / "submissions" / "good" / "essay.md").read_bytes()
    summary = (ESSAY / "submissions" / "good" / "summary.txt").read_text()
    made = client.post(
        "/v1/problems/reviewed-essay/submissions",
        headers=site.auth("bob"),
        files={"essay": ("essay.md", essay)},
        data={"summary": summary},
    )
    assert made.status_code == 201, made.text
    sid = made.json()["submission"]
    stage_seats = [
        s["seat"]
        for s in client.get("/v1/seats", headers=site.auth("rev1")).json()["open"]
        if s["seat"].startswith(sid)
    ]
    stage_seat = stage_seats[0]
    assert (
        client.post(f"/v1/seats/{quote(stage_seat)}/claim", headers=site.auth("rev1")).status_code
        == 200
    )
    campaign_seat = new_campaign(site)
    assert (
        client.post(
            f"/v1/seats/{quote(campaign_seat)}/claim", headers=site.auth("erin")
        ).status_code
        == 200
    )
    item, cid, _, node, index = campaign_seat.split("/")
    s_sub, run, stage, s_node, s_index = stage_seat.split("/")
    spliced = [
        f"{item}/{run}/{stage}/{s_node}/{s_index}",  # a campaign item with a stage seat's rest
        f"{s_sub}/{cid}/campaign/{node}/{index}",  # a submission with a campaign seat's rest
        f"{item}/{cid}/{stage}/{node}/{index}",  # the campaign seat naming a stage
        f"{item}/{cid}/campaign/{s_node}/{index}",  # a node the campaign does not have
        f"{item}/{cid}/campaign/{node}/01",  # the same index, spelled otherwise
        f"{item}/{cid}/campaign/{node}/{index}/",
    ]
    before = responses(site)
    for user in ("rev1", "erin"):
        csrf = login(client, site, user)
        for seat in spliced:
            assert client.get(f"/review/seat?id={quote(seat, safe='')}").status_code == 404, seat
            assert page_answer(client, csrf, seat) == 404, seat
            assert api_answer(client, site, user, seat) in (403, 404, 422), seat
    assert responses(site) == before
