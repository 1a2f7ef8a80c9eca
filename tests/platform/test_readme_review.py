"""The README's review walk-through, run as written (in bash, with the real ``assay``), in a
temporary folder instead of /tmp/review: three reviewers split, the expert decides, Verified."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("export ASSAY_DB=sqlite:////tmp/review/")
    return readme[start : readme.index("```", start)]


@pytest.mark.slow
@pytest.mark.bwrap
def test_the_readme_review_walk_through_ends_verified(tmp_path: Path) -> None:
    script = _block().replace("/tmp/review", str(tmp_path / "review"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "review (review): -: pending" in out
    assert "panel_vote (m_of_n): unresolved: 1 pass, 1 fail, 1 other of 3" in out
    assert "decision (first_resolved): accept: 'expert_vote' resolved: accept" in out
    final = out.strip().splitlines()[-3:]
    assert final[0].endswith(": Verified"), final
    assert "review (review): Verified: review accept" in final[2]
