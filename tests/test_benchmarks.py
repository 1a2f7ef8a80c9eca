"""The benchmarks run (small), so they cannot rot; their figures live in the README."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


@pytest.mark.slow
def test_answers_benchmark_runs_with_zero_false_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    import answers

    assert answers.main(["--n", "200"]) == 0
    out = capsys.readouterr().out
    assert "assay false accepts 0" in out
    assert "ratio" in out


@pytest.mark.slow
def test_sandbox_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import sandbox

    assert sandbox.main(["--runs", "3", "--checks", "10"]) == 0
    out = capsys.readouterr().out
    assert "overhead" in out
    assert "python checks/s" in out


@pytest.mark.slow
def test_proofs_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import proofs

    assert proofs.main(["--builtin", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "harness share" in out
    assert "cached verdict" in out


@pytest.mark.slow
def test_answer_math_benchmark_runs_with_zero_false_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import answer_math

    assert answer_math.main(["--every", "20", "--no-math-verify"]) == 0
    assert "assay false accepts 0" in capsys.readouterr().out


@pytest.mark.slow
def test_batch_benchmark_runs_with_identical_results(capsys: pytest.CaptureFixture[str]) -> None:
    import batch

    assert batch.main(["--n", "300", "--no-ray"]) == 0
    out = capsys.readouterr().out
    assert "scaling, local 2 workers / 1 worker" in out
    assert "results byte-identical across executors: yes (300 lines)" in out
