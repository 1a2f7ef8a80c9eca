"""``sandbox_python``: another build of the verifier's Python runs the judge, or it is refused.

The judge and the candidate's process then run on that interpreter, with every isolation
property of the default one (uid, capabilities, no_new_privs, seccomp, non-dumpable judge).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from assay import CheckContext, Config, Status, build_check
from assay._errors import InvalidInput
from assay.sandbox import Sandbox, configured_sandbox
from assay.sandbox._interpreter import sandbox_interpreter

DEBIAN = "/usr/bin/python3.11"
OURS = os.path.realpath(sys.executable)

needs_other_build = pytest.mark.skipif(
    not os.path.exists(DEBIAN)
    or os.path.realpath(DEBIAN) == OURS
    or sys.version_info[:2] != (3, 11),
    reason="needs a second build of this Python at /usr/bin/python3.11 (Debian's)",
)


def _fake(tmp_path: Path, facts: str) -> str:
    """An "interpreter" that answers the probe with ``facts``."""
    path = tmp_path / "python3"
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{facts}\nEOF\n")  # not echo: dash expands \\
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("python3.11", "is not an absolute path"),
        ("/nonexistent/python3.11", "cannot start"),
        ("/bin/true", "is not a Python this verifier can use"),
        (
            "FAKE:('cpython', (3, 12), b'\\xcb\\r\\r\\n', '', ('.so',), '/usr', '/usr', '3.12.1')",
            "3.12.1",
        ),
        (
            "FAKE:('cpython', (3, 11), b'\\x00\\x00\\r\\n', '', ('.so',), '/usr', '/usr', '3.11.0a1')",
            "same bytecode",
        ),
        ("FAKE:('pypy', (3, 11), b'', '', (), '/usr', '/usr', '7.3')", "pypy"),
        ("FAKE:not a tuple", "is not a Python"),
    ],
)
def test_an_interpreter_that_differs_is_refused_naming_the_field(
    given: str, says: str, tmp_path: Path
) -> None:
    if given.startswith("FAKE:"):
        given = _fake(tmp_path, given.removeprefix("FAKE:"))
    with pytest.raises(InvalidInput) as refused:
        sandbox_interpreter(given)
    assert refused.value.where == "sandbox_python"
    assert says in str(refused.value)
    with pytest.raises(InvalidInput):
        Sandbox(backend="bwrap", python=given)


def test_without_a_setting_the_judge_runs_on_the_verifiers_interpreter() -> None:
    sandbox = Sandbox(backend="bwrap")
    assert sandbox.python.path == OURS
    assert sandbox.python_argv()[0] == OURS


@needs_other_build
def test_the_configured_interpreter_is_used_by_configured_sandbox() -> None:
    sandbox = configured_sandbox(Config(sandbox_python=DEBIAN))
    assert sandbox.python.path == os.path.realpath(DEBIAN)
    assert sandbox.python_argv()[0] == os.path.realpath(DEBIAN)


PROBE = """
import os, sys
from solution import status
mine = open("/proc/self/status").read()
theirs = status()
for text in (mine, theirs):
    fields = dict(line.split(":", 1) for line in text.splitlines())
    assert fields["Uid"].split() == ["65534"] * 4, fields["Uid"]
    assert fields["Gid"].split() == ["65534"] * 4, fields["Gid"]
    assert fields["Groups"].strip() == "", fields["Groups"]
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(fields[cap], 16) == 0, (cap, fields[cap])
    assert fields["NoNewPrivs"].strip() == "1"
    assert fields["Seccomp"].strip() == "2"
assert sys.version.split()[0] == VERSION, sys.version
"""


@needs_other_build
@pytest.mark.parametrize("python", [None, DEBIAN])
def test_judge_and_candidate_keep_every_boundary_on_either_interpreter(
    python: str | None, tmp_path: Path
) -> None:
    (tmp_path / "solution.py").write_text(
        "def status():\n    return open('/proc/self/status').read()\n"
    )
    sandbox = Sandbox(backend="bwrap", python=python)
    code = PROBE.replace("VERSION", repr(sandbox.python.version))
    check = build_check({"kind": "python", "code": code})
    outcome = check.run(CheckContext(workspace=tmp_path, sandbox=sandbox))
    assert outcome.status is Status.VERIFIED, outcome.detail


ATTACKS = {
    "ptrace the judge": (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def attack():\n"
        "    return libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno()\n"
    ),
    "read the judge's memory": (
        "import os\n"
        "def attack():\n"
        "    try:\n"
        "        return open(f'/proc/{os.getppid()}/mem', 'rb').read(1)\n"
        "    except OSError as exc:\n"
        "        return -1, exc.errno\n"
    ),
}


@needs_other_build
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_candidate_cannot_reach_the_judge_on_the_other_interpreter(
    name: str, tmp_path: Path
) -> None:
    (tmp_path / "solution.py").write_text(ATTACKS[name])
    check = build_check(
        {
            "kind": "python",
            "code": "from solution import attack\nresult = attack()\nassert result[0] == -1, result",
        }
    )
    sandbox = Sandbox(backend="bwrap", python=DEBIAN)
    outcome = check.run(CheckContext(workspace=tmp_path, sandbox=sandbox))
    assert outcome.status is Status.VERIFIED, outcome.detail  # the attack failed, as asserted


@needs_other_build
def test_a_wrong_answer_is_refuted_on_the_other_interpreter(tmp_path: Path) -> None:
    (tmp_path / "solution.py").write_text("def add(a, b):\n    return a - b\n")
    check = build_check(
        {"kind": "python", "code": "from solution import add\nassert add(2, 3) == 5"}
    )
    sandbox = Sandbox(backend="bwrap", python=DEBIAN)
    outcome = check.run(CheckContext(workspace=tmp_path, sandbox=sandbox))
    assert outcome.status is Status.REFUTED, outcome.detail


def test_a_check_on_a_misconfigured_interpreter_is_an_error_naming_the_setting(
    tmp_path: Path,
) -> None:
    """The operator's setting, not the work: ``error``, never a verdict about the candidate."""
    (tmp_path / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    check = build_check(
        {"kind": "python", "code": "from solution import add\nassert add(2, 3) == 5"}
    )
    context = CheckContext(workspace=tmp_path, config=Config(sandbox_python="/bin/true"))
    outcome = check.run(context)
    assert outcome.status is Status.ERROR
    assert "sandbox_python" in outcome.detail
