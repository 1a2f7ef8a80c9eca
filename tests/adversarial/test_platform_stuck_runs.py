"""A run whose process died must be recorded as ended (``error``, "interrupted") by the next
sweep, never left "Running" for ever.

``Platform.sweep`` asks the ledger for open subjects (``Ledger.open_subjects``): per SUBMISSION,
the count of run starts and resumptions minus the count of waits and ends. Found here (xfail
until fixed): a run that waited at an external stage and was concluded there with anything but
``verified`` gets one start, one wait AND one end (-1): the submission's balance stays one
below what is open, so a later re-check of it whose process is killed is never listed, never
swept, and reads "Running" for ever (both databases).

Passing: the same killed re-check of a submission without an external stage is swept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.platform import Platform
from assay.platform import _platform as platform_module
from assay.platform._owner import _host
from assay.platform._records import Owner
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    make_problem,
    opened,
    store,
)

PARTY = {"name": "judge", "type": "external", "mechanism": "party", "party": "bob"}


def _killed_recheck(platform: Platform, submission: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-check whose process is killed after its start was recorded (as ``kill -9`` leaves
    it): owned by a pid that is gone, never concluded."""
    dead = Owner(host=_host(), pid=2**22 + 12345, started=1.0)

    def killed(self: Platform, runs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(platform_module, "me", lambda: dead)
        patch.setattr(Platform, "_conclude", killed)
        with pytest.raises(KeyboardInterrupt):
            platform.recheck(submission, "alice")


def _last_run(config: Any, clock: Clock, submission: str) -> Any:
    with opened(config, clock) as fresh:
        fresh.sweep()  # what every Platform.open does
        return fresh.show(submission, "alice").runs[-1]


def test_a_killed_recheck_after_an_external_refutation_is_swept(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = store(db_url, tmp_path)
    clock = Clock()
    contract = answer_contract()
    contract["stages"].append(PARTY)
    with opened(config, clock) as platform:
        platform.publish(make_problem(tmp_path, contract=contract), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        concluded = platform.record_external(
            run.submission, "judge", "bob", status=Status.REFUTED, reason="wrong"
        )
        assert concluded.status is Status.REFUTED
        _killed_recheck(platform, run.submission, monkeypatch)
    last = _last_run(config, clock, run.submission)
    assert last.status is Status.ERROR, f"the killed re-check reads {last.label!r} for ever"


def test_a_killed_recheck_is_swept(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        run = platform.submit("demo", {}, "42", "alice")
        _killed_recheck(platform, run.submission, monkeypatch)
    last = _last_run(config, clock, run.submission)
    assert last.status is Status.ERROR and "interrupted" in last.detail
