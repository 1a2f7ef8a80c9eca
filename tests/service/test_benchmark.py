"""benchmarks/service.py runs (small), so it cannot rot; its figures live in docs/service.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


@pytest.mark.slow
def test_service_benchmark_runs_with_the_same_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    import service

    assert service.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "items/s" in out and "ratio" in out
    assert "p99" in out
    assert "API cost" in out
    assert "--workers 2" in out  # the two-core row: two workers, clients at once
    # every item compared after each way of sending it: one worker and sequential batches, clients
    # at once to one worker and to two, and the in-process run on two processes
    assert "same through the API and in-process on 4096/4096" in out
