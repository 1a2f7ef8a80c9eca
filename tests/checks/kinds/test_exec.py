"""shell, python and hidden_python, run for real in bubblewrap (all four statuses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, InvalidSpec, Status, build_check
from assay.sandbox import Sandbox

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (root / "run.sh").chmod(0o700)
    return root


def run(sandbox: Sandbox, ws: Path | None, spec: dict[str, Any], **ctx: Any) -> Any:
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=sandbox, **ctx))


CASES: list[tuple[dict[str, Any], Status, str]] = [
    (
        {"kind": "python", "code": "from solution import add\nassert add(2, 3) == 5"},
        V,
        "ran to its end",
    ),
    (
        {"kind": "python", "code": "from solution import add\nassert add(2, 3) == 6"},
        R,
        "AssertionError",
    ),
    ({"kind": "python", "code": "print('hello')", "value": "hello"}, V, ""),
    ({"kind": "python", "code": "print('hello')", "value": "bye"}, R, "does not contain 'bye'"),
    ({"kind": "python", "code": "print('v1.2.3')", "pattern": r"v\d+\.\d+"}, V, ""),
    ({"kind": "python", "code": "print('v1')", "pattern": r"v\d+\.\d+"}, R, "no match"),
    (
        {"kind": "python", "code": "import sys\nsys.exit(0)\nassert False"},
        R,
        "exited before completing",
    ),
    ({"kind": "python", "code": "raise SystemExit(3)"}, R, "exit code 3"),
    ({"kind": "python", "code": "while True: pass", "timeout": 1}, I, "timed out after 1s"),
    (
        {"kind": "python", "code": "x = bytearray(1 << 30)", "memory_mb": 256},
        I,
        "memory limit (256 MiB)",
    ),
    (
        {
            "kind": "python",
            "code": "x = bytearray(1 << 30)",
            "memory_mb": 256,
            "limits_are_rules": True,
        },
        R,
        "rules forbid",
    ),
    ({"kind": "python", "code": "print('x' * 30000)", "output_kb": 1}, V, ""),
    ({"kind": "python", "code": "print('x' * 300000)", "output_kb": 1}, I, "output limit"),
    ({"kind": "shell", "code": "test -f solution.py"}, V, ""),
    ({"kind": "shell", "code": "./run.sh", "value": "ran"}, V, ""),
    ({"kind": "shell", "code": "false"}, R, "exit code 1, expected 0"),
    ({"kind": "shell", "code": "grep -q nothing solution.py", "expect_exit": 1}, V, ""),
    ({"kind": "shell", "code": "exit 0\necho unreachable"}, R, "exited before completing"),
    ({"kind": "shell", "code": "touch newfile"}, R, "Read-only file system"),
    ({"kind": "shell", "code": "echo hi > /tmp/x && cat /tmp/x", "value": "hi"}, V, ""),
    ({"kind": "hidden_python", "code": "from solution import add\nassert add(1, 1) == 2"}, V, ""),
    (
        {
            "kind": "hidden_python",
            "code": "from solution import add\nassert add(1, 1) == 3, 'SECRET'",
        },
        R,
        "exited before completing",
    ),
]


@pytest.mark.parametrize(("spec", "status", "message"), CASES)
def test_code_kinds(
    sandbox: Sandbox, ws: Path, spec: dict[str, Any], status: Status, message: str
) -> None:
    outcome = run(sandbox, ws, spec)
    assert outcome.status is status, outcome.detail
    assert message in outcome.detail
    assert outcome.evidence["isolation"] == "bwrap"


def test_hidden_output_never_shows(sandbox: Sandbox, ws: Path) -> None:
    outcome = run(
        sandbox,
        ws,
        {"kind": "hidden_python", "code": "print('EXPECTED=7')\nassert False, 'EXPECTED=7'"},
    )
    assert outcome.status is R
    assert "EXPECTED" not in outcome.detail and "EXPECTED" not in str(outcome.evidence)


def test_hidden_check_from_a_file(sandbox: Sandbox, ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret_check.py").write_text(
        "from solution import add\nassert add(20, 22) == 42\n"
    )
    spec = {"kind": "hidden_python", "file": "secret_check.py"}
    assert run(sandbox, ws, spec, base_dir=tmp_path).status is V
    missing = run(sandbox, ws, {"kind": "hidden_python", "file": "nope.py"}, base_dir=tmp_path)
    assert missing.status is E
    assert "nope.py" not in missing.detail


def test_no_workspace_runs_in_scratch(sandbox: Sandbox) -> None:
    assert run(sandbox, None, {"kind": "shell", "code": "pwd", "value": "/tmp"}).status is V


def test_a_workspace_too_large_to_stage_is_refuted(sandbox: Sandbox, ws: Path) -> None:
    # The workspace is the work: a wrong answer must not mask itself by adding files.
    (ws / "big.bin").write_bytes(b"0" * (2 * 1024 * 1024))
    outcome = run(sandbox, ws, {"kind": "shell", "code": "true"}, config=Config(max_staged_mb=1))
    assert outcome.status is R
    assert "the workspace cannot be staged" in outcome.detail


def test_untrusted_kinds_refuse_to_run_unisolated(ws: Path) -> None:
    outcome = run(Sandbox(backend="local"), ws, {"kind": "python", "code": "pass"})
    assert outcome.status is E
    assert "never runs unisolated" in outcome.detail


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"kind": "python", "code": ""}, "code: must not be empty"),
        ({"kind": "python", "code": "pass", "expect_exit": 1}, "expect_exit"),
        ({"kind": "shell", "code": "true", "value": "a", "pattern": "b"}, "at most one"),
        ({"kind": "shell", "code": "true", "timeout": 0}, "timeout"),
        ({"kind": "hidden_python"}, "exactly one of 'code' and 'file'"),
        ({"kind": "hidden_python", "code": "pass", "file": "x.py"}, "exactly one of"),
    ],
)
def test_specs(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        build_check(spec)


def test_a_runner_failure_is_an_error_not_a_finding() -> None:
    from assay.checks._kinds._exec import CodeSpec, _judge
    from assay.sandbox import RunResult

    failed = RunResult(0, None, "", 0, False, 0.1, "bwrap", started=True, runner_failed=True)
    outcome = _judge((failed, ""), CodeSpec(code="pass"), hidden=False, regex_timeout=1.0)
    assert outcome.status is E
    never_started = RunResult(1, None, "bwrap: cannot mount", 20, False, 0.1, "bwrap")
    never = _judge((never_started, ""), CodeSpec(code="pass"), hidden=False, regex_timeout=1.0)
    assert never.status is E


def test_tampering_cannot_reach_the_check(sandbox: Sandbox, ws: Path) -> None:
    """The solution runs in its own process: its sys.exit is not the check's."""
    (ws / "solution.py").write_text(
        "import sys\nsys.exit = lambda *a: None\ndef add(a, b):\n    return 0\n"
    )
    outcome = run(
        sandbox,
        ws,
        {
            "kind": "python",
            "code": "import sys\nfrom solution import add\nif add(1, 1) != 2:\n    sys.exit(1)",
        },
    )
    assert outcome.status is R
    assert "exited before completing (exit code 1)" in outcome.detail
