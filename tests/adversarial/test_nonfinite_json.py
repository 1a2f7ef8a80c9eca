"""Strict JSON refuses non-finite numbers wherever they come from (issue 7).

``1e999`` in Python's json is infinity, and matched a key of ``1e400``. Every JSON assay reads
from the work or its author (a workspace file, an answer-key submission, ``assay verify`` files,
task files) goes through one parser that refuses them, and a non-finite float that reaches the
comparison another way (the Python API) equals nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay import Status
from assay._strict import StrictJSONError, loads_strict, strict_equal
from assay.checks import score_answers
from tests.helpers import run_kind

ROOT = Path(__file__).resolve().parents[2]
OVERFLOWING = ["1e999", "-1e999", "1E400", "1e309", "123456789e305", "1e-999", "5E-400"]


@pytest.mark.parametrize("literal", OVERFLOWING)
def test_the_parser_refuses_overflow_and_underflow(literal: str) -> None:
    with pytest.raises(StrictJSONError, match=r"beyond the float range|underflows"):
        loads_strict(f'{{"x": [{literal}]}}')


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "9" * 5000])
def test_the_parser_refuses_other_unreadable_numbers(text: str) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(text)


@pytest.mark.parametrize("literal", ["1e308", "0e-999", "1e-320", "0.0", "-0.0", "1.5E+3"])
def test_finite_literals_still_parse(literal: str) -> None:
    assert loads_strict(literal) == float(literal)


@pytest.mark.parametrize("literal", ["1e999", "1e400", "-1e999", "1e-999"])
def test_file_json_refutes_a_workspace_file(tmp_path: Path, literal: str) -> None:
    (tmp_path / "out.json").write_text(f'{{"x": {literal}}}')
    outcome = run_kind("file_json", workspace=tmp_path, path="out.json", key="x", value=0.0)
    assert outcome.status is Status.REFUTED
    assert "not strict JSON" in outcome.detail


@pytest.mark.parametrize("literal", ["1e999", "1e400"])
def test_answer_key_refutes_a_submission(literal: str) -> None:
    outcome = run_kind(
        "answer_key", answer=f'{{"outputs": {{"t1": {literal}}}}}', key={"t1": float("inf")}
    )
    assert outcome.status is Status.REFUTED
    assert "not a strict JSON submission" in outcome.detail


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_values_equal_nothing(value: float) -> None:
    assert not strict_equal(value, value)
    assert not strict_equal([value], [value])
    assert not score_answers({"outputs": {"t": value}}, {"t": value}).accepted or (
        score_answers({"outputs": {"t": value}}, {"t": value}).reward == 0.0
    )


def _assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_a_task_file_with_an_overflowing_key_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.json").write_text('{"x": 1e999}')
    (tmp_path / "t.json").write_text(
        '{"checks": [{"kind": "file_json", "path": "out.json", "key": "x", "value": 1e400}],'
        ' "workspace": "ws"}'
    )
    result = _assay("check", "t.json", cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "beyond the float range" in result.stderr


@pytest.mark.parametrize(
    ("submission", "key"), [("1e999", "1e400"), ("1e999", "1"), ("1", "1e999")]
)
def test_verify_never_matches_overflow(tmp_path: Path, submission: str, key: str) -> None:
    (tmp_path / "s.json").write_text(f'{{"outputs": {{"t": {submission}}}}}')
    (tmp_path / "k.json").write_text(f'{{"t": {key}}}')
    result = _assay("verify", "s.json", "k.json", cwd=tmp_path)
    if key != "1":
        assert result.returncode == 2  # the author's key is invalid input
        assert "beyond the float range" in result.stderr
    else:
        assert result.returncode == 0
        score = json.loads(result.stdout)
        assert (score["reward"], score["accepted"]) == (0.0, False)
