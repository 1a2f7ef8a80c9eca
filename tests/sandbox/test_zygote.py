"""Sandbox templates (``Sandbox(zygote=True)``, the default): the judge's runs forked, not started.

What a forked run must be, exactly as a bubblewrap-started one: the same checks' results, its
own cgroup holding every thread of it, the judge's state (uid, capabilities, filter), the old
path still selectable, and a template that cannot start being assay's error, never a verdict.
The attacks on this boundary are in tests/adversarial/test_zygote_*.py.
"""

from __future__ import annotations

import ast
import contextlib
import threading
import time
from pathlib import Path

import pytest

import assay.sandbox._sandbox as backend
from assay import CheckContext, Config, Status, build_check
from assay._errors import SandboxUnavailable
from assay.sandbox import Limits, Sandbox, configured_sandbox, runner_control
from assay.sandbox._forked import Forked
from assay.sandbox._prepared import Prepared
from tests.sandbox.zygote_helpers import (
    WORKSPACE,
    descendants,
    judge_run,
    template_pids,
    zygote_sandbox,
)


def test_the_templates_own_file_imports_only_what_it_needs() -> None:
    """Its imports are paid once per template; none may come from a workspace (the judge's
    rule), and every one is popped from the judge's modules before a run (checked below)."""
    tree = ast.parse(Path(backend.RUNNER).with_name("_template.py").read_text())
    top = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert top <= {"marshal", "os", "sys"}
    nested = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert nested - top <= {"_signal", "_socket", "ctypes", "gc"}
    assert not [n for n in tree.body if isinstance(n, ast.ImportFrom)]


def test_a_forked_judge_has_the_modules_of_a_started_one() -> None:
    sandbox = zygote_sandbox()
    probe = "import sys\nprint('modules', sorted(sys.modules))"
    forked = judge_run(sandbox, probe).output.split("modules ")[1]
    started = Sandbox(backend="bwrap", zygote=False)
    control, nonce = runner_control("python", probe, "<check>", "/tmp")
    plain = started.run(started.python_argv(), cwd="/tmp", control=control, nonce=nonce)
    assert forked.strip() == plain.output.split("modules ")[1].strip()


@pytest.mark.parametrize("kind", ["python", "shell", "hidden_python"])
def test_checks_are_judged_alike_on_both_paths(tmp_path: Path, kind: str) -> None:
    (tmp_path / "solution.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "answer.txt").write_text("5\n")
    right, wrong = {
        "python": ("from solution import add\nassert add(2, 3) == 5", "assert 1 == 2"),
        "shell": ('test "$(cat answer.txt)" = 5', 'test "$(cat answer.txt)" = 6'),
        "hidden_python": (
            "import subprocess\nout = subprocess.run(['python3', '-c', "
            "'from solution import add; print(add(2, 3))'], capture_output=True, text=True)\n"
            "assert out.stdout.strip() == '5', out",
            "assert open('answer.txt').read().strip() == '6'",
        ),
    }[kind]
    for zygote in (True, False):
        context = CheckContext(workspace=tmp_path, sandbox=Sandbox(backend="bwrap", zygote=zygote))
        for code, status in ((right, Status.VERIFIED), (wrong, Status.REFUTED)):
            outcome = build_check({"kind": kind, "code": code}).run(context)
            assert outcome.status is status, (zygote, code, outcome.detail)


def test_the_old_path_is_selectable() -> None:
    assert configured_sandbox(Config(sandbox_zygote=False))._templates is None
    forked = configured_sandbox(Config())
    assert forked._templates is not None
    plain = Sandbox(backend="bwrap", zygote=False)
    with plain.prepare(plain.python_argv(), waits=True) as prepared:
        assert not isinstance(prepared.process, Forked)


def test_a_check_without_a_workspace_runs_in_tmp() -> None:
    sandbox = zygote_sandbox()
    outcome = build_check({"kind": "python", "code": "import os\nassert os.getcwd() == '/tmp'"})
    assert outcome.run(CheckContext(sandbox=sandbox)).status is Status.VERIFIED


def test_a_template_that_cannot_start_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zygote_sandbox()
    sandbox = Sandbox(backend="bwrap", zygote=True)
    # Another shape (a mount of its own), so this test gets a template of its own.
    monkeypatch.setattr(backend, "_system_args", _broken_system_args)
    (tmp_path / "x").write_text("")
    from assay.sandbox import Mount

    monkeypatch.setattr(
        "assay.checks._kinds._exec.judge_mounts", lambda shell: [Mount(tmp_path / "x", "/x")]
    )
    outcome = build_check({"kind": "python", "code": "assert False"}).run(
        CheckContext(sandbox=sandbox)
    )
    assert outcome.status is Status.ERROR, outcome.detail


def _broken_system_args(*args: object) -> tuple[tuple[str, ...], frozenset[str]]:
    return ("/bin/false",), frozenset()


@pytest.mark.slow
def test_every_thread_of_a_forked_run_is_in_each_of_its_cgroups() -> None:
    """Its init joins every controller's cgroup first thing, alone (v1: ``0`` into ``tasks``),
    so every thread and process of the run descends from a member: seen from the host."""
    sandbox = zygote_sandbox()
    code = (
        "import threading, time\n"
        "for _ in range(4):\n    threading.Thread(target=time.sleep, args=(8,)).start()\n"
        "import solution\nsolution.spin()\ntime.sleep(8)"
    )
    module = (
        "import threading, time\ndef spin():\n    for _ in range(3):\n"
        "        threading.Thread(target=time.sleep, args=(8,)).start()\n"
    )
    with sandbox.prepare(
        sandbox.python_argv(),
        cwd=WORKSPACE,
        limits=Limits(timeout=30),
        folder_at=WORKSPACE,
        waits=True,
    ) as prepared:
        (prepared.folder / "solution.py").write_text(module)
        cgroup = prepared._cgroup
        assert cgroup is not None
        control, nonce = runner_control("python", code, "<t>", WORKSPACE)
        runner = threading.Thread(target=_run_quietly, args=(prepared, control, nonce))
        runner.start()
        try:
            deadline, tids = time.monotonic() + 20, set()
            while time.monotonic() < deadline:  # init; judge + 4 threads; candidate + 3
                templates = template_pids()
                tids = {t for pid in templates for t in _threads(descendants(pid))}
                tids -= {t for pid in templates for t in _threads([pid])}
                if len(tids) >= 10:
                    break
                time.sleep(0.1)
            assert len(tids) >= 10, tids
            for folder in cgroup._folders:
                members = {int(t) for t in (folder / "tasks").read_text().split()}
                assert tids <= members, (folder, tids - members)
        finally:
            prepared.kill()
            runner.join(timeout=20)


def _run_quietly(prepared: Prepared, control: bytes, nonce: str) -> None:
    with contextlib.suppress(SandboxUnavailable):  # killed by the test: no status came
        prepared.run(control, nonce)


def _threads(pids: list[int]) -> set[int]:
    tids = set()
    for pid in pids:
        try:
            tids |= {int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()}
        except OSError:
            continue
    return tids


def test_without_detached_mounts_runs_start_with_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel without ``open_tree``/``mount_setattr`` cannot attach a run's folder in a
    forked run: the judge's runs then start with bubblewrap, as before, and still judge."""
    monkeypatch.setattr(backend, "_detached_mounts", lambda: False)
    sandbox = Sandbox(backend="bwrap", zygote=True)
    with sandbox.prepare(sandbox.python_argv(), waits=True) as prepared:
        assert not isinstance(prepared.process, Forked)
    (tmp_path / "answer.txt").write_text("5")
    context = CheckContext(workspace=tmp_path, sandbox=sandbox)
    right = build_check({"kind": "python", "code": "assert open('answer.txt').read() == '5'"})
    assert right.run(context).status is Status.VERIFIED
