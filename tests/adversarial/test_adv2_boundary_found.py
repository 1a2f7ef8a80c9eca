"""Found by the second adversarial review of the sandbox boundary (helper "adv2-boundary").

Class: **code planted for the processes that run after the submission, in the same run.**
Every process of a run shares one uid, ``HOME=/tmp`` (writable) and Python's user
site-packages (enabled). A submission that a check runs *as a process*, as the docs ask, writes
``~/.local/lib/python3.X/site-packages/usercustomize.py``. Every Python started after it in
the same run imports that file first: the author's own comparison (``python3 -c "assert ..."``
in a shell check, a reference program in a ``program`` checker, a helper in a ``python`` check)
is then the submission's code. No race, no fd, no signal: a wrong answer (41, the check wants 42)
is verified.

Each test states the status the attack must get and is marked ``xfail(strict=True)`` until the
class is closed (suggested fix: ``PYTHONNOUSERSITE=1`` in the sandbox's environment, and a
``HOME`` the run cannot write, so that no tool's per-user configuration is plantable).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, build_check
from assay.status import Outcome
from tests.adversarial.code_checks import run, sandbox, workspace
from tests.helpers import R

# The planted module prints the submission's answer and exits 0: a reference then agrees
# with it, an assertion passes.
PLANT = """\
import os, site
where = site.getusersitepackages()
os.makedirs(where, exist_ok=True)
with open(os.path.join(where, "usercustomize.py"), "w") as f:
    f.write("print(41, flush=True)\\nimport os\\nos._exit(0)\\n")
print(41)
"""
HONEST = "print(41)\n"


def found(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"found by adversarial review (round 2): {reason}")


SHELL = {
    "kind": "shell",
    "memory_mb": 256,
    "code": (
        "python3 solve.py > /tmp/out.txt\n"
        "python3 -c \"assert open('/tmp/out.txt').read().strip() == '42', 'wrong'\"\n"
    ),
}
PYTHON = {
    "kind": "python",
    "memory_mb": 256,
    "code": (
        "import subprocess, sys\n"
        "out = subprocess.run([sys.executable, 'solve.py'], capture_output=True, text=True)\n"
        "check = 'import sys; sys.exit(sys.argv[1].strip() != \"42\")'\n"
        "assert subprocess.run(['python3', '-c', check, out.stdout]).returncode == 0\n"
    ),
}
# A program checker that runs the submission, then a reference (here inline) to compare with;
# it concludes on the private "fd" result channel, as the docs ask of such a checker.
CHECKER = """\
import json, os, subprocess
def output(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
got = output(["python3", "/input/artifacts/program/solve.py"])
want = output(["python3", "-c", "print(6 * 7)"])
verdict = {"result": "verified" if got == want else "refuted", "summary": f"printed {got}"}
os.write(int(os.environ["ASSAY_RESULT_FD"]), json.dumps(verdict).encode())
"""


def _program(tmp_path: Path, solve: str) -> Outcome:
    task = tmp_path / "task"
    task.mkdir()
    (task / "check.py").write_text(CHECKER)
    spec: dict[str, Any] = {
        "kind": "program",
        "checker": "check.py",
        "artifacts": {"program": "solve.py"},
        "result_channel": "fd",
        "timeout": 20,
        "memory_mb": 256,
    }
    ws = workspace(tmp_path, {"solve.py": solve})
    return build_check(spec).run(CheckContext(workspace=ws, base_dir=task, sandbox=sandbox()))


def _outcome(kind: str, tmp_path: Path, solve: str) -> Outcome:
    if kind == "program":
        return _program(tmp_path, solve)
    return run(tmp_path, {"solve.py": solve}, SHELL if kind == "shell" else PYTHON)


KINDS = ["shell", "python", "program"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_wrong_answer_alone_is_refuted(kind: str, tmp_path: Path) -> None:
    """The control: the checks below are sound against a submission that plants nothing."""
    outcome = _outcome(kind, tmp_path, HONEST)
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize("kind", KINDS)
def test_a_submission_plants_code_in_the_checks_later_python(kind: str, tmp_path: Path) -> None:
    outcome = _outcome(kind, tmp_path, PLANT)
    assert outcome.status is R, outcome.detail


# A second class, found on the way: the author's own ``python3 -c`` (in a shell check, or run
# from a python check) starts in the workspace, so ``sys.path[0]`` is the workspace and a file
# the submission named ``json.py`` is imported instead of the standard library's. The judge of a
# python check is protected (its direct ``import json`` is refuted); a Python it starts is not.
SHADOW = {"solve.py": HONEST, "json.py": "import os\nos._exit(0)\n"}
SHADOWED = {
    "shell": {
        "kind": "shell",
        "memory_mb": 256,
        "code": (
            "python3 solve.py > /tmp/out.txt\n"
            "python3 -c \"import json; assert json.load(open('/tmp/out.txt')) == 42\"\n"
        ),
    },
    "python": {
        "kind": "python",
        "memory_mb": 256,
        "code": (
            "import subprocess, sys\n"
            "out = subprocess.run([sys.executable, 'solve.py'], capture_output=True).stdout\n"
            "check = 'import json, sys; sys.exit(json.loads(sys.argv[1]) != 42)'\n"
            "assert subprocess.run([sys.executable, '-c', check, out]).returncode == 0\n"
        ),
    },
}


@found(
    "documented limit (README, the sandbox): a Python the check starts in the workspace puts "
    "the workspace first on sys.path (-c, -m); run it with -I or -P. PYTHONSAFEPATH would also "
    "stop honest `python3 solve.py` from importing modules beside it"
)
@pytest.mark.parametrize("kind", sorted(SHADOWED))
def test_a_workspace_module_shadows_the_checks_own_python(kind: str, tmp_path: Path) -> None:
    outcome = run(tmp_path, SHADOW, SHADOWED[kind])
    assert outcome.status is R, outcome.detail


@pytest.mark.parametrize("kind", sorted(SHADOWED))
def test_the_shadowing_checks_refute_the_wrong_answer_alone(kind: str, tmp_path: Path) -> None:
    outcome = run(tmp_path, {"solve.py": HONEST}, SHADOWED[kind])
    assert outcome.status is R, outcome.detail
