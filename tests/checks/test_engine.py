from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import (
    CheckContext,
    InvalidInput,
    InvalidSpec,
    Outcome,
    Status,
    build_check,
    build_checks,
    run_checks,
)
from assay.checks import Spec, check_task, load_task
from assay.checks._registry import _REGISTRY, kind


@pytest.fixture
def broken_kind() -> Iterator[str]:
    @kind("test_broken", Spec)
    def broken(spec: Spec, ctx: CheckContext) -> Outcome:
        """A kind that always raises, to prove the engine contains it."""
        raise ZeroDivisionError("boom")

    yield "test_broken"
    del _REGISTRY["test_broken"]


def test_registering_a_name_twice_fails_at_import_time() -> None:
    with pytest.raises(RuntimeError, match="registered twice"):

        @kind("answer_equals", Spec)
        def again(spec: Spec, ctx: CheckContext) -> Outcome:
            """Shadow."""
            return Outcome.verified()


def test_an_exception_inside_a_kind_is_an_error_and_the_batch_goes_on(broken_kind: str) -> None:
    checks = build_checks([{"kind": broken_kind}, {"kind": "answer_equals", "value": "x"}])
    report = run_checks(checks, CheckContext(answer="x"))
    assert [o.status for o in report.outcomes] == [Status.ERROR, Status.VERIFIED]
    assert "ZeroDivisionError: boom" in report.outcomes[0].detail
    assert report.status is Status.ERROR and report.score is None


def test_outcomes_are_stamped_with_their_kind() -> None:
    outcome = build_check({"kind": "answer_equals", "value": "x"}).run(CheckContext(answer="y"))
    assert outcome.kind == "answer_equals"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "'kind' is required"),
        (
            {"kind": "answer_equal", "value": "x"},
            "unknown kind 'answer_equal'; known kinds: agda, answer_contains",
        ),
        ([], "must be an object"),
        (
            {"kind": "answer_equals", "value": "x", "weight": -1},
            r"check \(answer_equals\): weight: Input should be greater than 0",
        ),
    ],
)
def test_build_check_errors_name_the_problem(raw: object, message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        build_check(raw)  # type: ignore[arg-type]


def test_an_empty_check_list_is_refused() -> None:
    with pytest.raises(InvalidSpec, match="empty check list is never a pass"):
        build_checks([])
    with pytest.raises(InvalidSpec):
        run_checks([], CheckContext())


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_task_file_paths_resolve_against_its_folder(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("hi")
    task = write(
        tmp_path / "task.json",
        {"checks": [{"kind": "file_exists", "path": "a.txt"}], "workspace": "ws"},
    )
    assert check_task(task).status is Status.VERIFIED


def test_answer_override(tmp_path: Path) -> None:
    task = write(
        tmp_path / "t.json", {"checks": [{"kind": "answer_number", "value": 4}], "answer": "5"}
    )
    assert check_task(task).status is Status.REFUTED
    assert check_task(task, answer="4").status is Status.VERIFIED


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON: Expecting property name"),
        ("[]", "must be a JSON object"),
        ('{"checks": []}', "checks: there are no checks"),
        (
            '{"checks": [{"kind": "answer_number"}]}',
            r"checks\[0\] \(answer_number\): value: Field required",
        ),
        ('{"checks": [{"kind": "answer_number", "value": 1}], "mode": "some"}', "mode"),
        (
            '{"checks": [{"kind": "answer_number", "value": 1}], "answr": "1"}',
            "answr: unknown field",
        ),
        (
            '{"checks": [{"kind": "web_receipt"}], "receipts": [{"url": "x"}]}',
            r"receipts\[0\].status: Field required",
        ),
        (
            '{"checks": [{"kind": "answer_number", "value": 1}], "answer": 1}',
            "answer: Input should be a valid string",
        ),
    ],
)
def test_invalid_task_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match=message):
        load_task(path)


def test_weighted_task(tmp_path: Path) -> None:
    task = write(
        tmp_path / "t.json",
        {
            "mode": "weighted",
            "answer": "42",
            "checks": [
                {"kind": "answer_number", "value": 42, "weight": 3},
                {"kind": "answer_one_of", "values": ["forty-two"]},
            ],
        },
    )
    report = check_task(task)
    assert (report.status, report.score) == (Status.REFUTED, 0.75)
