"""The ledger benchmark runs (small, on both stores), so it cannot rot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


@pytest.mark.slow
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_ledger_benchmark_runs(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    import ledger

    assert ledger.main(["--rows", "3000", "--appends", "50", "--postgres", db_url]) == 0
    out = capsys.readouterr().out
    for store in ("sqlite", "postgresql"):
        assert f"{store:10} verify    3,000 rows" in out
        assert "intact: True" in out
    assert out.count("ratio") == 2
