"""One item of a batch (``Platform.submit_many``) must not decide the fate of the others.

A batch is how a training loop records many rollouts in two transactions; each item is meant to
be treated exactly as ``submit`` treats it. Found here (fixed; kept as regression tests):

- the allowance is re-read inside the append (``guard=``); when one participant's count changed
  meanwhile (a submission of theirs landed from another process between the batch's read and
  its write), the guard raises ``AllowanceUsed`` for the WHOLE batch: every other participant's
  item is dropped and the caller gets one exception instead of a result per item;
- an artifact the blob store refuses (a symbolic link, in a problem whose revision pins no
  contract, so ``_refusals`` never looked at it) raises out of ``submit_many``: every other item
  of the batch is dropped, nothing is recorded;
- ``attempt=None`` continues the participant's latest attempt, but within a batch "latest" is
  read from the ledger only: an item after an ``attempt="new"`` item of the same participant
  starts yet another attempt, where two ``submit`` calls in a row would share one.

Refused correctly (passing): the allowance counts every item of one batch, per participant
(several participants, refused items included, items over the count refused one by one), and
results come back in the order of the work; an append the guard aborted (PostgreSQL in
pipeline mode too) leaves the store usable and wrote nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import AllowanceUsed, Platform, RunView, Work
from assay.status import Status
from tests.adversarial.platform_attacks import (
    Clock,
    answer_contract,
    artifact,
    make_problem,
    opened,
    store,
)

ONE_A_DAY = {"allowance": {"count": 1, "window_hours": 24}}
TWO_A_DAY = {"allowance": {"count": 2, "window_hours": 24}}


def _racing(platform: Platform, before_the_write: Any) -> None:
    """Run ``before_the_write`` (another process's action) once, between the batch's reads and
    its guarded append: the moment a real race lands in."""
    real = platform.ledger.append
    fired: list[bool] = []

    def append(*entries: Any, guard: Any = None) -> Any:
        if guard is not None and not fired:
            fired.append(True)
            before_the_write()
        return real(*entries, guard=guard)

    platform.ledger.append = append  # type: ignore[method-assign]


def test_a_race_on_one_participants_allowance_drops_no_one_elses_item(
    db_url: str, tmp_path: Path
) -> None:
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform, opened(config, clock) as other:
        folder = make_problem(tmp_path, contract=answer_contract(), policy=ONE_A_DAY)
        platform.publish(folder, "mgr")
        _racing(platform, lambda: other.submit("demo", {}, "41", "alice"))
        works = [Work(name, summary="42") for name in ("alice", "bob", "carol")]
        try:
            results = platform.submit_many("demo", works)
        except AllowanceUsed as exc:
            pytest.fail(f"the whole batch was refused for alice's race: {exc}")
        assert isinstance(results[0], AllowanceUsed)
        assert [getattr(r, "status", None) for r in results[1:]] == [Status.VERIFIED] * 2
    with opened(config, clock) as fresh:
        landed = [e.participant for e in fresh.ledger.find(kind="submission.made")]
        assert sorted(landed) == ["alice", "bob", "carol"]


def test_an_artifact_the_store_refuses_drops_no_one_elses_item(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/ledger.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=None), "mgr")  # record-only
        good = artifact(tmp_path, "good.txt", "hello")
        link = tmp_path / "work" / "link"
        os.symlink("/etc/hostname", link)
        try:
            results = platform.submit_many(
                "demo", [Work("alice", {"doc": good}), Work("bob", {"doc": link})]
            )
        except InvalidInput as exc:
            pytest.fail(f"bob's link dropped alice's item too: {exc}")
        assert isinstance(results[0], RunView)
        assert isinstance(results[1], InvalidInput)
        assert len(platform.ledger.find(kind="submission.made")) == 1


def test_a_batch_continues_the_attempt_it_just_began(tmp_path: Path) -> None:
    config = store(f"sqlite:///{tmp_path}/ledger.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        platform.submit_many(
            "demo", [Work("alice", summary="41", attempt="new"), Work("alice", summary="42")]
        )
        attempts = {e.body["attempt"] for e in platform.ledger.find(kind="submission.made")}
        assert len(attempts) == 1, f"one batch, like two submits in a row, made {attempts}"


def test_the_allowance_counts_every_item_of_one_batch(db_url: str, tmp_path: Path) -> None:
    config = store(db_url, tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(
            make_problem(tmp_path, contract=answer_contract(), policy=TWO_A_DAY), "mgr"
        )
        earlier = platform.submit("demo", {}, "1", "carol")
        works = [
            Work("alice", summary="41", attempt="new"),
            Work("alice", summary="42"),
            Work("alice", summary="42"),  # third of two: refused
            Work("bob", {"nope": Path("/etc/hostname")}, "42"),  # refused at the door: counts
            Work("bob", summary="42"),
            Work("bob", summary="42"),  # bob's third: refused
            Work("carol", summary="42"),
            Work("carol", summary="42", attempt=earlier.submission),  # over, whatever it names
            *[Work("dave", summary="42") for _ in range(5)],
        ]
        results = platform.submit_many("demo", works)
        assert len(results) == len(works)
        kinds = [
            "run" if isinstance(r, RunView) else "full" if isinstance(r, AllowanceUsed) else "no"
            for r in results
        ]
        assert kinds == [
            *["run", "run", "full"],
            *["no", "run", "full"],
            *["run", "full"],
            *["run", "run", "full", "full", "full"],
        ]
        statuses = [r.status for r in results if isinstance(r, RunView)]
        assert statuses == [Status.REFUTED, *[Status.VERIFIED] * 5]
        more = platform.submit_many(
            "demo", [Work(p, summary="42") for p in ["alice", "bob", "dave"]]
        )
        assert all(isinstance(r, AllowanceUsed) for r in more)


def test_a_refused_guarded_append_leaves_the_store_usable(db_url: str, tmp_path: Path) -> None:
    """After the guard aborted an append (mid-transaction, PostgreSQL in pipeline mode), the same
    platform appends again, and nothing of the aborted batch was written."""
    config = store(db_url, tmp_path)
    clock = Clock()
    with opened(config, clock) as platform, opened(config, clock) as other:
        platform.publish(
            make_problem(tmp_path, contract=answer_contract(), policy=ONE_A_DAY), "mgr"
        )
        _racing(platform, lambda: other.submit("demo", {}, "41", "alice"))
        with pytest.raises(AllowanceUsed):
            platform.submit("demo", {}, "42", "alice")
        again = platform.submit("demo", {}, "42", "bob")
        assert again.status is Status.VERIFIED
        made = [e.participant for e in platform.ledger.find(kind="submission.made")]
        assert made == ["alice", "bob"]
        assert platform.verify().intact


def test_a_batch_item_cannot_join_another_participants_attempt(tmp_path: Path) -> None:
    """The batch caches attempts per (participant, attempt): bob's attempt, named by alice in
    the same batch right after bob used it, is still refused for her."""
    config = store(f"sqlite:///{tmp_path}/ledger.db", tmp_path)
    with opened(config, Clock()) as platform:
        platform.publish(make_problem(tmp_path, contract=answer_contract()), "mgr")
        bobs = platform.submit("demo", {}, "41", "bob")
        attempt = platform.show(bobs.submission, "bob").attempt
        results = platform.submit_many(
            "demo",
            [
                Work("bob", summary="42", attempt=attempt),
                Work("alice", summary="42", attempt=attempt),
            ],
        )
        assert isinstance(results[0], RunView)
        assert isinstance(results[1], InvalidInput) and "not one of your attempts" in str(
            results[1]
        )
        mine = platform.ledger.find(kind="submission.made", participant="alice")
        assert not mine
