"""Reviewer shopping: the participant re-checks (free, unlimited) until a panel accepts.

A re-check is a new run, and a new run of a review stage is a fresh panel. An inconclusive run
is not a finding, so a panel that split (one pass, one fail, one uncertain) is simply outvoted
by the next panel that accepts.

Found: after a split panel (unresolved -> inconclusive), ``assay recheck`` opens a new panel;
when it accepts, the standing verdict reads ``Verified`` (src/assay/platform/_read.py,
``verdict``: only verified/refuted runs are findings; src/assay/platform/_platform.py,
``recheck``: any participant, no allowance). The earlier reviewer who said ``fail`` is ignored.
A refuted run is only downgraded to a conflict (``inconclusive``), kept below as a regression.
Wanted: a re-check does not re-open a concluded review stage (it re-runs the deterministic
stages and reuses the review's conclusion), or a re-check that reaches a review stage counts
against the allowance and a new panel's accept does not override an earlier panel's fail
votes (e.g. combine every run's review responses, or: standing = the first concluded review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import Clock
from tests.review.helpers import (
    claim_and_answer,
    publish,
    seats_of,
    single,
    sqlite_platform,
    users,
)


def _panel(platform: Platform, run: str, verdicts: list[str]) -> None:
    for i, verdict in enumerate(verdicts, 1):
        seat = next((s for s in seats_of(platform, f"rev{i}") if f"/{run}/" in s), None)
        if seat is None:  # the earlier review was carried over: no new panel opened (the fix)
            assert i == 1, "a panel closed halfway"
            return
        claim_and_answer(platform, seat, f"rev{i}", verdict)


@pytest.mark.parametrize(
    "earlier",
    [
        [["pass", "fail", "uncertain"]],
        [["pass", "fail", "uncertain"], ["fail", "uncertain", "pass"]],
        [["fail", "fail", "pass"]],  # a refutation: only downgraded to a conflict (regression)
    ],
    ids=["split", "split-twice", "refuted"],
)
def test_a_new_panel_does_not_launder_an_earlier_one(
    tmp_path: Path, earlier: list[list[str]]
) -> None:
    wanted = {Status.INCONCLUSIVE, Status.REFUTED}
    with sqlite_platform(tmp_path, Clock()) as platform:
        publish(platform, tmp_path, single(3, 2))
        users(platform, reviewers=3, experts=0)
        run = platform.submit("reviewed", {}, "42", "alice")
        for n, verdicts in enumerate([*earlier, ["pass", "pass", "pass"]]):
            if n:
                run = platform.recheck(run.submission, "alice")
            _panel(platform, run.run, verdicts)
            standing = platform.show(run.submission, "alice").verdict.standing
            assert standing in wanted, (
                f"after panels {[*earlier, ['pass'] * 3][: n + 1]}: {standing}"
            )
