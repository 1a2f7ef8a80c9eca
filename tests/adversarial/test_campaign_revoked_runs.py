"""Revoked work keeps counting in audits and in the report: an audit over "the runs the checker
verified" samples runs whose checker was revoked (they no longer count: their verdict is void),
the report scores the audit against that void verdict, and a review stage whose checker was
revoked still has its decision counted in the protocol's outcomes and matches.

Found (1): ``Campaigns._runs`` (src/assay/platform/_campaigns.py) selected runs by their
``run.finished`` status alone, so ``runs:status=verified`` sampled revoked runs as "verified"
and a reviewer's rejection of one counted as the checker being wrong.
Found (2): ``review_report`` (src/assay/platform/_review_report.py) read an audited run's
automated verdict as recorded when the campaign opened, also after the run's checker was
revoked, and a revoked review stage's ``accept``/``reject`` as the protocol's decision.
Fixed: a runs query never selects a run that no longer counts (``History.revoked``'s rule);
the report leaves out the automated verdict of a run revoked since, and the outcome of a review
whose ``review:`` checker is revoked (both said in its notes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform, review_report
from assay.platform import _records as r
from tests.adversarial.campaign_attacks import (
    audited,
    claim_answer,
    expert,
    experts,
    open_seats,
    submit,
)
from tests.adversarial.review_attacks import publish_reviewed
from tests.platform.conftest import Clock
from tests.review.helpers import seats_of, single, sqlite_platform, users


def _checker(platform: Platform, run: str) -> str:
    (stage,) = [e for e in platform.ledger.find(kind=r.STAGE) if e.body["run"] == run]
    return str(stage.body["checkers"][0])


def test_an_audit_of_verified_runs_never_samples_a_revoked_one(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        audited(platform, tmp_path, problem="elsewhere", manager="other")
        old = submit(platform, tmp_path, "audited", "alice")
        elsewhere = submit(platform, tmp_path, "elsewhere", "alice")
        checker = _checker(platform, old.run)
        platform.revoke(checker, "the check accepted wrong answers", "boss")
        new = submit(platform, tmp_path, "audited", "bob")  # after: it concludes nothing
        assert new.status is not None and new.status.value == "inconclusive"
        with pytest.raises(InvalidInput, match="gives no items"):
            platform.reviews.campaigns.create(expert(), "runs:problem=audited", "boss")
        view = platform.reviews.campaigns.create(
            expert(), "runs:problem=audited,status=any", "boss"
        )
        assert [(i.label, i.automated) for i in view.items] == [(new.run, "inconclusive")]
        # boss's revocation covers only the problems boss manages: other's runs still count
        view = platform.reviews.campaigns.create(expert(), "runs:problem=elsewhere", "other")
        assert [i.label for i in view.items] == [elsewhere.run]


def test_the_report_drops_the_automated_verdict_of_a_run_revoked_since(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        audited(platform, tmp_path)
        experts(platform, "erin")
        runs = [submit(platform, tmp_path, "audited", f"p{i}") for i in range(2)]
        view = platform.reviews.campaigns.create(expert(), "runs:problem=audited", "boss")
        for item in view.items:
            (seat,) = open_seats(platform, "erin", item.item)
            claim_answer(platform, seat, "erin", "fail")  # the audit rejects both
        before = review_report(platform.reviews, [])
        (audit,) = before.protocols
        assert audit.automated_disagreement is not None
        assert (audit.automated_disagreement.k, audit.automated_disagreement.n) == (2, 2)
        platform.revoke(_checker(platform, runs[0].run), "found wrong", "boss")
        after = review_report(platform.reviews, [])  # both runs used it: both are void now
        (audit,) = after.protocols
        assert audit.automated_disagreement is None
        assert audit.outcomes == {"reject": 2}  # the audit's own decisions still stand
        assert len(runs) == 2


def test_a_revoked_review_decides_nothing_in_the_report(tmp_path: Path) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish_reviewed(platform, tmp_path, single(1, 1))
        users(platform)
        work = tmp_path / "w.txt"
        work.write_text("work")
        subs = [platform.submit("reviewed", {}, "42", f"p{i}").submission for i in range(2)]
        assert work.exists()
        for n, sub in enumerate(subs):
            seat = next(s for s in seats_of(platform, "rev1") if s.startswith(sub))
            claimed = platform.reviews.claim(seat, "rev1")
            platform.reviews.respond(
                seat,
                "rev1",
                f'{{"verdict": "{"pass" if n else "fail"}", "rationale": "r", '
                f'"citations": ["{claimed.materials[0].uri}"], "confidence": 1, '
                '"assistance": []}'.encode(),
            )
        (reviewed,) = review_report(platform.reviews, []).protocols
        assert reviewed.outcomes == {"accept": 1, "reject": 1}
        stage = next(e for e in platform.ledger.find(kind=r.STAGE) if e.body["type"] == "review")
        platform.revoke(stage.body["checkers"][0], "the reviewers colluded", "author")
        (reviewed,) = review_report(platform.reviews, []).protocols
        assert reviewed.outcomes == {} and reviewed.concluded == 0 and reviewed.units == 2
