"""The submission allowance: a rolling window per participant per problem, shared across
revisions, on an injectable clock. Refused (invalid) and withdrawn submissions count; one whose
first run ended in ``error`` (assay's fault) does not. A refusal names the exact next slot and
records nothing."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import AllowanceUsed, Platform
from assay.status import Status
from tests.platform.conftest import (
    ANSWER_CONTRACT,
    SCHEMA,
    SCHEMA_CONTRACT,
    SCHEMA_FILES,
    T0,
    Clock,
    artifact,
    make_problem,
    rows,
    write,
)

TWO_PER_HOUR = {"allowance": {"count": 2, "window_hours": 1}}


def _answer_problem(platform: Platform, tmp_path: Path, problem: str = "demo") -> Path:
    folder = make_problem(tmp_path, problem=problem, contract=ANSWER_CONTRACT, policy=TWO_PER_HOUR)
    platform.publish(folder, "alice")
    return folder


def test_the_window_rolls_and_the_next_slot_is_exact(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    _answer_problem(platform, tmp_path)
    platform.submit("demo", {}, "41", "bob")
    clock.advance(minutes=10)
    platform.submit("demo", {}, "42", "bob")
    clock.advance(minutes=10)
    before = rows(platform)
    with pytest.raises(AllowanceUsed) as caught:
        platform.submit("demo", {}, "42", "bob")
    assert isinstance(caught.value, InvalidInput)  # exit 2 at the CLI
    assert caught.value.next_slot == T0 + timedelta(hours=1)
    assert "the next slot frees at 2030-01-01T13:00:00Z" in str(caught.value)
    assert rows(platform) == before  # a refusal for the allowance records nothing
    clock.now = T0 + timedelta(hours=1) - timedelta(microseconds=1)
    with pytest.raises(AllowanceUsed):
        platform.submit("demo", {}, "42", "bob")
    clock.now = T0 + timedelta(hours=1)  # the first submission leaves the window
    platform.submit("demo", {}, "42", "bob")
    with pytest.raises(AllowanceUsed) as caught:
        platform.submit("demo", {}, "42", "bob")
    assert caught.value.next_slot == T0 + timedelta(hours=1, minutes=10)


def test_per_participant_and_per_problem(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    _answer_problem(platform, tmp_path, "one")
    _answer_problem(platform, tmp_path, "two")
    for _ in range(2):
        platform.submit("one", {}, "42", "bob")
    with pytest.raises(AllowanceUsed):
        platform.submit("one", {}, "42", "bob")
    platform.submit("one", {}, "42", "carol")
    platform.submit("two", {}, "42", "bob")


def test_shared_across_revisions(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    folder = _answer_problem(platform, tmp_path)
    platform.submit("demo", {}, "41", "bob")
    platform.submit("demo", {}, "42", "bob")
    write(folder, "statement.md", "Solve it (clarified).")
    assert platform.publish(folder, "alice").new
    with pytest.raises(AllowanceUsed):
        platform.submit("demo", {}, "42", "bob")


def test_refused_submissions_count(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    platform.publish(
        make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES, policy=TWO_PER_HOUR),
        "alice",
    )
    for _ in range(2):
        with pytest.raises(InvalidInput, match="'doc' is required"):
            platform.submit("demo", {}, "no file", "bob")
        clock.advance(minutes=1)
    with pytest.raises(AllowanceUsed) as caught:
        platform.submit("demo", {"doc": artifact(tmp_path, "d.json", '{"x": 1}')}, None, "bob")
    assert caught.value.next_slot == T0 + timedelta(hours=1)


def test_withdrawn_submissions_count(platform: Platform, clock: Clock, tmp_path: Path) -> None:
    platform.publish(
        make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES, policy=TWO_PER_HOUR),
        "alice",
    )
    doc = {"doc": artifact(tmp_path, "d.json", '{"x": 1}')}
    for _ in range(2):
        run = platform.submit("demo", doc, None, "bob")
        platform.withdraw(run.submission, "doc", "bob")
    with pytest.raises(AllowanceUsed):
        platform.submit("demo", doc, None, "bob")


def test_a_submission_whose_first_run_was_an_error_does_not_count(
    platform: Platform, clock: Clock, tmp_path: Path
) -> None:
    platform.publish(
        make_problem(tmp_path, contract=SCHEMA_CONTRACT, files=SCHEMA_FILES, policy=TWO_PER_HOUR),
        "alice",
    )
    doc = {"doc": artifact(tmp_path, "d.json", '{"x": 1}')}
    # the reference's bytes are lost from the store: assay's fault, not the participant's
    sha = hashlib.sha256(json.dumps(SCHEMA).encode()).hexdigest()
    (tmp_path / "blobs" / sha[:2] / sha).unlink()
    errors = [platform.submit("demo", doc, None, "bob") for _ in range(3)]
    assert [e.status for e in errors] == [Status.ERROR] * 3, errors[0].detail
    # the bytes come back (republished): every error run left the allowance whole
    platform.ledger.blobs.put_bytes(json.dumps(SCHEMA).encode())
    later = Platform(platform.ledger, platform.config, clock=clock)  # lays references out anew
    try:
        assert later.submit("demo", doc, None, "bob").status is Status.VERIFIED
        assert later.submit("demo", doc, None, "bob").status is Status.VERIFIED
        with pytest.raises(AllowanceUsed):
            later.submit("demo", doc, None, "bob")
        # an errored submission re-checked later still does not count: its first run decides
        assert later.recheck(errors[0].submission, "bob").status is Status.VERIFIED
        clock.advance(hours=1)
        for _ in range(2):
            later.submit("demo", doc, None, "bob")
    finally:
        shutil.rmtree(later._scratch, ignore_errors=True)  # not close(): the ledger is shared
