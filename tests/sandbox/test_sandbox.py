"""The isolation backend itself, run for real through bubblewrap."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay import SandboxUnavailable
from assay.sandbox import Limits, Mount, RunResult, Sandbox, runner_control
from tests.sandbox.helpers import LoopbackListener, wait_for_no_sandbox_processes


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def run(sandbox: Sandbox, code: str, cwd: str = "/tmp", **kwargs: Any) -> RunResult:
    control, nonce = runner_control("python", code, "<t>", cwd)
    return sandbox.run(sandbox.python_argv(), control=control, nonce=nonce, cwd=cwd, **kwargs)


def test_runs_as_an_unprivileged_user_with_an_empty_environment(sandbox: Sandbox) -> None:
    os.environ["ASSAY_TEST_SECRET"] = "do-not-leak"
    result = run(sandbox, "import os; print(os.getuid(), sorted(os.environ))")
    assert result.completed and result.isolation == "bwrap"
    uid, env = result.output.split(" ", 1)
    assert uid == "65534"
    assert "ASSAY_TEST_SECRET" not in env


def test_no_network_even_to_the_hosts_loopback(sandbox: Sandbox) -> None:
    listener = LoopbackListener(wait=3)
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {listener.port}), timeout=1)"
    result = run(sandbox, code)
    assert listener.close() == []
    assert not result.completed
    assert "Connection refused" in result.output or "unreachable" in result.output


def test_the_system_is_read_only_and_tmp_is_private(sandbox: Sandbox, tmp_path: Path) -> None:
    code = """
import os
for path in ('/usr/evil', '/etc/evil', '/evil', '/workspace/evil'):
    try:
        open(path, 'w').write('x')
        print('WROTE', path)
    except OSError as exc:
        print('refused', path, exc.errno)
open('/tmp/scratch', 'w').write('ok')
print(os.listdir('/tmp'))
"""
    (tmp_path / "ws").mkdir()
    result = run(sandbox, code, mounts=[Mount(tmp_path / "ws", "/workspace")])
    assert result.completed, result.output
    assert "WROTE" not in result.output
    assert "['scratch']" in result.output
    assert list((tmp_path / "ws").iterdir()) == []
    assert not Path("/tmp/scratch").exists()


def test_timeout_kills_the_whole_tree(sandbox: Sandbox) -> None:
    code = "import subprocess\nsubprocess.Popen(['sleep', '60'])\nwhile True: pass"
    result = run(sandbox, code, limits=Limits(timeout=1))
    assert result.limit == "time"
    assert not result.completed
    assert wait_for_no_sandbox_processes() == []


def test_a_daemon_does_not_outlive_the_run(sandbox: Sandbox) -> None:
    code = "import subprocess\nsubprocess.Popen(['setsid', 'sh', '-c', 'sleep 30'], start_new_session=True)\nprint('spawned')"
    result = run(sandbox, code)
    assert result.completed
    assert wait_for_no_sandbox_processes() == []


def test_memory_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "x = bytearray(512 * 1024 * 1024)", limits=Limits(memory_mb=256))
    assert result.limit == "memory"
    assert not result.completed


def test_process_limit(sandbox: Sandbox) -> None:
    code = "import os, time\nfor _ in range(100):\n    if os.fork() == 0:\n        time.sleep(5)\n        os._exit(0)"
    result = run(sandbox, code, limits=Limits(processes=10, timeout=10))
    assert result.limit == "processes"
    assert wait_for_no_sandbox_processes() == []


def test_output_is_capped_and_a_flood_is_stopped(sandbox: Sandbox) -> None:
    result = run(sandbox, "print('x' * 5000)", limits=Limits(output_kb=1))
    assert result.completed
    assert result.truncated and len(result.output) == 1024 and result.output_bytes > 5000
    flood = run(
        sandbox, "import sys\nwhile True: sys.stdout.write('y' * 65536)", limits=Limits(output_kb=4)
    )
    assert flood.limit == "output"


def test_file_size_limit_binds_without_a_cgroup_but_is_not_a_limit_the_parent_sees() -> None:
    # RLIMIT_FSIZE stops the write; SIGXFSZ/EFBIG are things a run could fake, so the run
    # simply failed (no limit named). With a cgroup, /tmp is memory and the cgroup bounds it.
    sandbox = Sandbox(backend="bwrap", cgroups=False)
    result = run(
        sandbox, "open('/tmp/big', 'wb').write(b'0' * (3 * 1024 * 1024))", limits=Limits(file_mb=1)
    )
    assert result.exit_code != 0 and not result.completed
    assert result.limit is None


def test_the_done_channel_needs_the_nonce(sandbox: Sandbox) -> None:
    code = """
import os, json
for fd in range(3, 64):
    try:
        os.write(fd, json.dumps({"nonce": "guess", "event": "completed"}).encode() + b"\\n")
    except OSError:
        pass
os._exit(0)
"""
    result = run(sandbox, code)
    assert result.started and not result.completed


def test_untrusted_code_is_refused_without_isolation() -> None:
    local = Sandbox(backend="local")
    assert local.isolation == "none"
    with pytest.raises(SandboxUnavailable, match="never runs unisolated"):
        run(local, "print(1)")


def test_unisolated_runs_only_when_allowed_and_say_so(tmp_path: Path) -> None:
    local = Sandbox(backend="local", allow_unisolated=True)
    result = run(local, "print('hello')", cwd=str(tmp_path))
    assert result.completed and result.isolation == "none"


def test_the_runner_imports_only_builtin_modules() -> None:
    """Every import the runner makes is paid on every check (contextlib alone costs ~10 ms)."""
    import ast

    import assay.sandbox._sandbox as backend

    tree = ast.parse(backend.RUNNER.read_text())
    top_level = {
        alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names
    }
    assert top_level <= {"builtins", "errno", "marshal", "os", "sys"}
    assert not [n for n in tree.body if isinstance(n, ast.ImportFrom)]
