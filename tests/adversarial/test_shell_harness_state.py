"""Class: a script the check sources pins or rewrites the harness's shell state (issue 7, item 6).

``readonly __assay_status=0`` in a sourced script once made the wrapper's status assignment
fail silently, and the check passed. The check's shell now holds no harness state: no variable,
no function, no command before its last line; the last line is made of keywords, an assignment
and a redirection, and only a report sent by bash's own process counts. Each script below is
sourced by a check whose last command fails (the work is wrong): none may be verified.

What sourcing still permits (documented in ``_shellrun.py`` and the README): a sourced script
runs inside the check's shell and, deliberately, can read bash's own script for the run's token
and write the report itself. Run candidate scripts as processes instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

SOURCED = {
    "readonly_old_status": "readonly __assay_status=0",
    "readonly_timeformat": 'readonly TIMEFORMAT="0123456789abcdef0123456789abcdef 0"',
    "function_printf": "printf() { command printf '%s 0\\n' \"${2%% *}\"; }",
    "function_exit": "exit() { builtin exit 0; }",
    "function_builtin": "builtin() { :; }",
    "function_trap": "trap() { :; }",
    "function_command": "command() { :; }",
    "function_echo": "echo() { :; }",
    "disable_builtins": "enable -n printf echo test '[' true false",
    "trap_exit_zero": "trap 'exit 0' EXIT",
    "trap_err": "trap 'return 0' ERR",
    "set_e": "set -e",
    "set_u_and_pipefail": "set -uo pipefail",
    "exit_zero": "exit 0",
    "return_zero": "return 0",
    "close_report_fd": "exec 99>&- 98<&- 2>&-",
    "stop_debug": "shopt -s extdebug; trap 'false' DEBUG",
    "alias_time": "shopt -s expand_aliases; alias time='echo 0 >&99; true'",
}

WRONG = '. ./lib.sh\ntest "$(cat answer.txt)" = 42'


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SOURCED))
def test_a_sourced_script_never_makes_wrong_work_pass(tmp_path: Path, name: str) -> None:
    files = {"lib.sh": SOURCED[name] + "\n", "answer.txt": "41\n"}
    outcome = run(tmp_path, files, {"kind": "shell", "code": WRONG})
    assert outcome.status is Status.REFUTED, outcome.detail


def test_a_benign_sourced_script_and_right_work_pass(tmp_path: Path) -> None:
    files = {"lib.sh": "greet() { echo hello; }\n", "answer.txt": "42\n"}
    outcome = run(tmp_path, files, {"kind": "shell", "code": WRONG + "\ngreet", "value": "hello"})
    assert outcome.status is Status.VERIFIED, outcome.detail


CHILDREN = {
    "guess_on_every_fd": (
        "for fd in range(3, 256):\n"
        "    try:\n"
        "        os.write(fd, b'0123456789abcdef0123456789abcdef 0\\n')\n"
        "    except OSError:\n"
        "        pass\n"
    ),
    "read_bash_script_fd": (
        "for fd in os.listdir(f'/proc/{os.getppid()}/fd'):\n"
        "    data = open(f'/proc/{os.getppid()}/fd/{fd}', 'rb').read()\n"
        "    token = data.split(b'TIMEFORMAT=\"')[1][:32]\n"
        "    os.write(99, token + b' 0\\n')\n"
    ),
    "read_bash_memory": (
        "mem = open(f'/proc/{os.getppid()}/mem', 'rb')\n"
        "for line in open(f'/proc/{os.getppid()}/maps'):\n"
        "    start, end = (int(x, 16) for x in line.split()[0].split('-'))\n"
        "    try:\n"
        "        mem.seek(start)\n"
        "        data = mem.read(end - start)\n"
        "    except OSError:\n"
        "        continue\n"
        "    if b'TIMEFORMAT=\"' in data:\n"
        "        token = data.split(b'TIMEFORMAT=\"')[1][:32]\n"
        "        os.write(99, token + b' 0\\n')\n"
    ),
}


@pytest.mark.parametrize("name", sorted(CHILDREN))
def test_a_process_the_check_starts_cannot_write_the_report(tmp_path: Path, name: str) -> None:
    forge = (
        "import os, sys\ntry:\n"
        + "".join(f"    {line}\n" for line in CHILDREN[name].splitlines())
        + "except Exception as exc:\n    print('forge failed:', type(exc).__name__)\n"
    )
    files = {"forge.py": forge, "answer.txt": "41\n"}
    code = 'python3 forge.py\ntest "$(cat answer.txt)" = 42'
    outcome = run(tmp_path, files, {"kind": "shell", "code": code})
    assert outcome.status is Status.REFUTED, outcome.detail


def test_no_readable_bash_is_ever_used_in_place_of_the_protected_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the unreadable copy of bash cannot be installed (its folder belongs to someone
    else), a shell check is an error, never silently run with a readable, dumpable bash whose
    report token the check's children could read."""
    from assay.sandbox import _judge_files

    monkeypatch.setattr(_judge_files, "_protected_bash", lambda: None)
    outcome = run(tmp_path, {"solve.sh": "echo 4\n"}, {"kind": "shell", "code": "true"})
    assert outcome.status is Status.ERROR, outcome.detail
    assert "readable bash" in outcome.detail
