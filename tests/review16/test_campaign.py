"""Standalone review campaigns on both stores, on the test's clock: seats for each item exactly
as a stage opens them (the same board, reducers, leases, deadlines, independence, conflicts),
deterministic sampling, audits of sampled runs, a ranking's order, and refused input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.platform._campaigns import parse_runs_query, sample
from assay.review import records as rr
from tests.platform.conftest import Clock
from tests.review.helpers import answer, escalation, users
from tests.review16.helpers import checked, expert, items, parsed, ranking, respond, seats


def test_sampling_is_deterministic_and_seeded() -> None:
    candidates = [f"r-{i:03}" for i in range(100)]
    once = sample(candidates, 5, 7)
    assert once == sample(candidates, 5, 7) and len(once) == 5
    assert once == sorted(once)  # kept in the candidates' own order
    assert once != sample(candidates, 5, 8)
    assert sample(candidates, None, None) == candidates
    assert sample(candidates, 500, 1) == candidates


def test_a_file_campaign_reviews_each_item_as_a_stage_would(
    platform: Platform, tmp_path: Path
) -> None:
    users(platform)
    folder = items(tmp_path, 4)
    view = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss", 2, 3)
    again = platform.reviews.campaigns.create(parsed(escalation()), str(folder), "boss", 2, 3)
    assert [i.label for i in view.items] == [i.label for i in again.items]  # same sample
    assert view.candidates == 4 and view.sample == 2 and view.seed == 3
    cid = view.campaign
    first, second = (i.item for i in view.items)
    # item 1: the panel agrees; item 2: it splits and the expert reads the reports
    for n, verdict in enumerate(["pass", "pass", "fail"], 1):
        respond(platform, seats(platform, f"rev{n}", "panel", first)[0], f"rev{n}", verdict)
    for n, verdict in enumerate(["pass", "fail", "uncertain"], 1):
        seat = seats(platform, f"rev{n}", "panel", second)[0]
        claimed = platform.reviews.claim(seat, f"rev{n}")
        assert [m.uri for m in claimed.materials] == [f"assay://campaign/{cid}/item/2"]
        material = platform.reviews.material(seat, claimed.materials[0].uri, f"rev{n}")
        assert material == (folder / view.items[1].label).read_bytes()
        done = platform.reviews.respond(seat, f"rev{n}", answer(verdict, claimed.materials[0].uri))
    assert [s["outcome"] for s in done.reductions] == ["unresolved"]
    (seat,) = seats(platform, "exp1", "expert")
    claimed = platform.reviews.claim(seat, "exp1")
    reports = [m.uri for m in claimed.materials if m.uri.startswith("assay://review/")]
    assert len(reports) == 3
    done = platform.reviews.respond(seat, "exp1", answer("fail", reports[1]))
    assert done.concluded is not None and done.concluded["outcome"] == "reject"
    shown = platform.reviews.campaigns.show(cid, "boss")
    assert [(i.decision, i.status) for i in shown.items] == [
        ("accept", "verified"),
        ("reject", "refuted"),
    ]
    record = shown.items[1].review
    nodes = {n.name: n for n in record.nodes}
    assert nodes["expert"].seats[0].user == "exp1"
    assert [s.response["verdict"] for s in nodes["panel"].seats] == ["pass", "fail", "uncertain"]
    kinds = [e.kind for e in platform.ledger.find(subject=second)]
    assert kinds.count(rr.REDUCED) == 3 and kinds[-1] == rr.CONCLUDED
    assert seats(platform, "rev1", item=first) == []  # concluded: no open seat


def test_independence_leases_and_deadlines_hold_in_a_campaign(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    users(platform)
    view = platform.reviews.campaigns.create(parsed(escalation()), str(items(tmp_path, 1)), "boss")
    cid, item = view.campaign, view.items[0].item
    seat = seats(platform, "rev1", "panel")[0]
    respond(platform, seat, "rev1", "pass")
    hidden = platform.reviews.campaigns.show(cid, "rev2").items[0].review.nodes[0].seats[0]
    assert hidden.response is None and hidden.withheld
    other = seats(platform, "rev2", "panel")[0]
    platform.reviews.claim(other, "rev2")
    with pytest.raises(InvalidInput, match="claimed until"):
        platform.reviews.claim(other, "rev3")
    clock.advance(hours=2, seconds=1)  # the lease lapsed: the seat reopens, to anyone
    platform.reviews.claim(other, "rev3")
    with pytest.raises(InvalidInput, match="no live claim"):
        platform.reviews.respond(other, "rev2", answer("pass", f"assay://campaign/{cid}/item/1"))
    clock.advance(hours=72)
    shown = platform.reviews.campaigns.show(cid, "boss").items[0]
    assert shown.decision == "unresolved" and shown.status == "inconclusive"
    assert "1 of 3 seats answered by its deadline" in (shown.detail or "")
    assert seats(platform, "rev2", item=item) == []


def test_an_audit_campaign_samples_runs_and_shows_their_submissions(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    checked(platform, tmp_path)
    platform.reviews.add_user("exp1", ["experts"], "boss")
    platform.reviews.add_user("carol", ["experts"], "boss")
    old = platform.submit("checked", {}, "42", "carol")  # before the audited week
    clock.advance(days=1)
    since = clock.now.isoformat().replace("+00:00", "Z")
    runs = [platform.submit("checked", {}, "42" if i % 3 else "41", f"p{i}") for i in range(9)]
    verified = sorted(r.run for r in runs if r.status is not None and r.status.value == "verified")
    assert len(verified) == 6
    query = f"runs:problem=checked,status=verified,checker=assay:,since={since}"
    view = platform.reviews.campaigns.create(parsed(expert()), query, "boss", 3, 11)
    labels = [i.label for i in view.items]
    assert view.candidates == 6 and len(labels) == 3 and set(labels) <= set(verified)
    assert labels == sample(verified, 3, 11) and old.run not in labels
    assert all(i.automated == "verified" for i in view.items)
    item = view.items[0]
    seat = seats(platform, "exp1", "expert", item.item)[0]
    claimed = platform.reviews.claim(seat, "exp1")
    uris = [m.uri for m in claimed.materials]
    assert f"assay://submission/{item.target}/summary" in uris  # as a review stage shows it
    assert platform.reviews.material(seat, uris[0], "exp1") == b"42"
    platform.reviews.respond(seat, "exp1", answer("fail", uris[0]))
    shown = platform.reviews.campaigns.show(view.campaign, "boss")
    assert shown.items[0].decision == "reject" and shown.items[0].automated == "verified"
    # a participant never audits their own run; only a manager of the problem opens an audit
    carol = platform.reviews.campaigns.create(
        parsed(expert()), "runs:problem=checked,status=any", "boss"
    )
    mine = next(i for i in carol.items if i.label == old.run)
    seat = f"{mine.item}/{carol.campaign}/campaign/expert/1"
    with pytest.raises(InvalidInput, match="submitter never reviews"):
        platform.reviews.claim(seat, "carol")
    with pytest.raises(InvalidInput, match="does not manage problem 'checked'") as caught:
        platform.reviews.campaigns.create(parsed(expert()), "runs:problem=checked", "exp1")
    assert caught.value.where == "--as"


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [
        # means 0.6, 0.8, 0.6: a tie, the earlier item first
        ("mean", [("item02.md", 0.8), ("item01.md", 0.6), ("item03.md", 0.6)]),
        ("min", [("item02.md", 0.7), ("item01.md", 0.5), ("item03.md", 0.4)]),
        ("max", [("item02.md", 0.9), ("item03.md", 0.8), ("item01.md", 0.7)]),
    ],
)
def test_a_ranking_campaign_orders_items_as_the_reducer_aggregates(
    platform: Platform, tmp_path: Path, aggregate: str, expected: list[tuple[str, float]]
) -> None:
    users(platform, reviewers=2, experts=0)
    view = platform.reviews.campaigns.create(
        parsed(ranking(aggregate)), str(items(tmp_path, 3)), "boss"
    )
    scores = {1: (0.5, 0.7), 2: (0.9, 0.7), 3: (0.8, 0.4)}
    for item in view.items:
        n = int(item.item.rpartition(".")[2])
        for j, value in enumerate(scores[n], 1):
            seat = f"{item.item}/{view.campaign}/campaign/judges/{j}"
            claimed = platform.reviews.claim(seat, f"rev{j}")
            document = {
                "score": value,
                "rationale": "r",
                "citations": [claimed.materials[0].uri],
                "assistance": [],
            }
            platform.reviews.respond(seat, f"rev{j}", json.dumps(document).encode())
    shown = platform.reviews.campaigns.show(view.campaign, "boss")
    assert shown.order is not None and shown.order_rule is not None
    assert [(o.label, o.score) for o in shown.order] == expected
    assert {o.aggregate for o in shown.order} == {aggregate}
    assert shown.order_rule.startswith(f"{aggregate} of 'score'")
    assert "ties by the item's place" in shown.order_rule
    decided = {i.label: i.decision for i in shown.items}
    assert decided == {label: "accept" if v >= 0.5 else "reject" for label, v in expected}


@pytest.mark.parametrize(
    ("items_given", "n", "seed", "where", "says"),
    [
        ("runs:colour=red", None, None, "--items", "keys problem, status"),
        ("runs:status=great", None, None, "--items", "status='great'"),
        ("runs:since=yesterday", None, None, "--items", "not an ISO 8601"),
        ("runs:since=2026-01-01T00:00:00", None, None, "--items", "give a timezone"),
        ("runs:status=verified", None, None, "--items", "gives no items"),
        ("no-such-folder", None, None, "--items", "neither a folder nor a runs query"),
        ("runs:", 0, None, "--sample", "at least 1"),
        ("runs:", None, 3, "--seed", "give --sample N too"),
    ],
)
def test_bad_campaign_input_is_refused_naming_the_field(
    platform: Platform,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    items_given: str,
    n: int | None,
    seed: int | None,
    where: str,
    says: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput, match=says.replace("(", r"\(")) as caught:
        platform.reviews.campaigns.create(parsed(expert()), items_given, "boss", n, seed)
    assert caught.value.where == where
    assert parse_runs_query("runs:").status == "verified"
