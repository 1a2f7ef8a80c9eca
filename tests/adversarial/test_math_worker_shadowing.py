"""The symbolic worker is a trusted process the verifier starts: files in the folder the verifier
runs from (often the agent's workspace), PYTHONPATH and the user site must not shadow the modules
it imports. Found in review: it was started with ``python -c`` from the verifier's folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PAYLOAD = 'open({marker!r}, "w").write("ran")\n'
CHECK = (
    "from assay import CheckContext, build_check\n"
    "check = build_check({'kind': 'answer_math', 'value': r'\\sin(x)^2 + \\cos(x)^2'})\n"
    "print(check.run(CheckContext(answer=r'\\boxed{1}')).status.value)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("module", ["json", "mpmath", "sympy", "assay"])
def test_a_module_in_the_verifiers_folder_never_runs_in_the_worker(
    tmp_path: Path, module: str
) -> None:
    marker = tmp_path / "ran"
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / f"{module}.py").write_text(PAYLOAD.format(marker=str(marker)))
    env = {**os.environ, "PYTHONPATH": str(planted)}
    # The verifier itself runs isolated here (-I), so only the worker it starts could import
    # the planted module: from its working folder or from PYTHONPATH.
    result = subprocess.run(
        [sys.executable, "-I", "-c", CHECK],
        cwd=planted,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "verified"  # decided by the symbolic step, in the worker
    assert not marker.exists()
