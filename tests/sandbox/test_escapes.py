"""The escape suite: agent workspaces that each try one thing. None may end verified, hang the
verifier, or leave a process or a file behind. Each solution returns the right answer (42) only if
its trick worked, so a verified outcome would mean the trick got through."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Status, build_check
from assay.sandbox import Sandbox
from tests.sandbox.helpers import LoopbackListener, staging_dirs, wait_for_no_sandbox_processes

CHECK = "from solution import answer\nassert answer() == 42\nprint('all good')"
SECRET = "hidden-check-token-7f3a"

ESCAPES: dict[str, str] = {
    "write_outside_scratch": """
        def answer():
            for path in ("/usr/lib/pwned", "/etc/pwned", "/pwned", "{host}/pwned"):
                try:
                    open(path, "w").write("x")
                    return 42
                except OSError:
                    pass
            return 0
    """,
    "modify_the_workspace": """
        def answer():
            try:
                open("/workspace/solution.py", "a").write("# changed")
                return 42
            except OSError:
                return 0
    """,
    "read_host_environment": """
        import os
        def answer():
            found = "ASSAY_ESCAPE_SECRET" in os.environ
            for pid in os.listdir("/proc"):
                try:
                    found |= b"ASSAY_ESCAPE_SECRET" in open(f"/proc/{pid}/environ", "rb").read()
                except OSError:
                    pass
            return 42 if found else 0
    """,
    "fork_bomb": """
        import os
        def answer():
            while True:
                os.fork()
    """,
    "memory_bomb": """
        def answer():
            hoard = []
            while True:
                hoard.append(bytearray(64 * 1024 * 1024))
    """,
    "infinite_loop": """
        def answer():
            while True:
                pass
    """,
    "output_flood": """
        import sys
        def answer():
            chunk = "x" * 65536
            for _ in range(1600):
                sys.stdout.write(chunk)
            return 0
    """,
    "setsid_daemon": """
        import subprocess
        subprocess.Popen(["setsid", "sh", "-c", "sleep 60; touch /tmp/daemon-was-here"])
        def answer():
            return 0
    """,
    "sys_exit_before_asserts": """
        import sys
        sys.exit(0)
    """,
    "os_exit_before_asserts": """
        import os
        os._exit(0)
    """,
    "print_a_fake_pass": """
        print("all good")
        print('{"event": "completed"}')
        def answer():
            return 0
    """,
    "write_to_every_fd": """
        import os
        for fd in range(3, 256):
            try:
                os.write(fd, b"0123456789abcdef completed\\n")
            except OSError:
                pass
        def answer():
            return 0
    """,
    "delete_sys_exit": """
        import sys
        del sys.exit
        def answer():
            return 0
    """,
    "replace_builtins_exit": """
        import builtins, sys
        builtins.exit = builtins.quit = sys.exit = lambda *args: None
        def answer():
            return 0
    """,
}

EXIT_CHECK = "from solution import answer\nif answer() != 42:\n    exit(1)\nprint('all good')"


@pytest.fixture
def host_secret() -> Iterator[None]:
    os.environ["ASSAY_ESCAPE_SECRET"] = "verifier-only"
    yield
    del os.environ["ASSAY_ESCAPE_SECRET"]


def workspace(tmp_path: Path, source: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "solution.py").write_text(textwrap.dedent(source).replace("{host}", str(tmp_path)))
    return ws


def run_check(ws: Path, spec: dict[str, Any], **ctx: Any) -> Any:
    check = build_check(spec)
    return check.run(CheckContext(workspace=ws, sandbox=Sandbox(backend="bwrap"), **ctx))


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_escape_attempt_is_never_verified(name: str, tmp_path: Path, host_secret: None) -> None:
    ws = workspace(tmp_path, ESCAPES[name])
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    staged_before = staging_dirs()
    for code in (CHECK, EXIT_CHECK):
        outcome = run_check(ws, {"kind": "python", "code": code, "timeout": 3, "value": "all good"})
        assert outcome.status is not Status.VERIFIED, (name, outcome.detail)
    assert wait_for_no_sandbox_processes() == [], f"{name} left a process behind"
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "pwned").exists()
    assert not Path("/tmp/daemon-was-here").exists()
    assert staging_dirs() == staged_before


def test_network_connect_to_a_loopback_listener_fails(tmp_path: Path) -> None:
    listener = LoopbackListener()
    source = f"""
        import socket
        def answer():
            try:
                socket.create_connection(("127.0.0.1", {listener.port}), timeout=2).sendall(b"leak")
                return 42
            except OSError:
                return 0
    """
    outcome = run_check(workspace(tmp_path, source), {"kind": "python", "code": CHECK})
    assert listener.close() == []
    assert outcome.status is Status.REFUTED


def test_the_hidden_check_source_cannot_be_read(tmp_path: Path) -> None:
    head, tail = SECRET[:8], SECRET[8:]
    source = f"""
        import os
        TOKEN = "{head}".encode() + "{tail}".encode()  # never the literal, or this file would match
        def _search():
            for top in ("/tmp", "/workspace", "/.assay", "/proc/self"):
                for folder, _, files in os.walk(top):
                    for name in files:
                        try:  # non-blocking: a pipe of its own (under /proc/self/fd) would wait
                            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NONBLOCK)
                            try:
                                if TOKEN in os.read(fd, 1 << 20):
                                    return True
                            finally:
                                os.close(fd)
                        except OSError:
                            pass
            for fd in range(256):
                try:  # a fresh non-blocking open: a pipe of its own would wait forever
                    copy = os.open(f"/proc/self/fd/{{fd}}", os.O_RDONLY | os.O_NONBLOCK)
                    try:
                        if TOKEN in os.read(copy, 1 << 16):
                            return True
                    finally:
                        os.close(copy)
                except OSError:
                    pass
            return False
        FOUND = _search()
        def answer():
            print("FOUND" if FOUND else "not found")
            return 42 if FOUND else 0
    """
    (tmp_path / "hidden.py").write_text(
        f"# {SECRET}\nfrom solution import answer\nassert answer() == 42\n"
    )
    ws = workspace(tmp_path, source)
    outcome = run_check(ws, {"kind": "hidden_python", "file": "hidden.py"}, base_dir=tmp_path)
    assert outcome.status is Status.REFUTED
    assert SECRET not in outcome.detail and "hidden.py" not in outcome.detail
    assert outcome.evidence is not None and SECRET not in str(outcome.evidence)
    visible = run_check(
        ws, {"kind": "python", "code": f"# {SECRET}\nfrom solution import answer\nanswer()"}
    )
    assert "not found" in visible.detail or visible.status is Status.VERIFIED
