"""Shared by the sandbox-template tests: a sandbox whose judge runs are forked from a template,
a judge run with its whole output, and the template processes as the host sees them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.sandbox import Limits, Mount, RunResult, Sandbox, runner_control
from assay.sandbox._forked import TEMPLATES, Forked
from assay.sandbox._judge_files import judge_mounts

WORKSPACE = "/workspace"


def zygote_sandbox() -> Sandbox:
    """A sandbox that forks the judge's runs from a template; skips where none can be made."""
    sandbox = Sandbox(backend="bwrap", zygote=True)
    if not sandbox._forkable(sandbox.python_argv()):
        pytest.skip("sandbox templates need bubblewrap as root and a cgroup per run")
    return sandbox


def judge_run(
    sandbox: Sandbox,
    code: str,
    files: dict[str, str] | None = None,
    timeout: float = 20,
    nonces: list[str] | None = None,
) -> RunResult:
    """One python check run by the judge (forked from the template), its output whole.

    ``files`` make its workspace (mounted at /workspace, the check's folder); ``nonces`` gets the
    run's nonce appended (the verifier's secret for this run)."""
    limits = Limits(timeout=timeout)
    with sandbox.prepare(
        sandbox.python_argv(),
        cwd=WORKSPACE,
        mounts=judge_mounts(shell=False),
        limits=limits,
        folder_at=WORKSPACE,
        waits=True,
    ) as prepared:
        assert isinstance(prepared.process, Forked), "the run was not forked from a template"
        for name, text in (files or {}).items():
            (prepared.folder / name).write_text(text)
        cwd = sandbox.inside_path(WORKSPACE, [Mount(prepared.folder, WORKSPACE)])
        control, nonce = runner_control("python", code, "<check>", cwd)
        if nonces is not None:
            nonces.append(nonce)
        return prepared.run(control, nonce)


def template_pids() -> list[int]:
    """The host pids of every live template's interpreter (``runner.pyc template``), not of
    the runs it forked (whose command line is the same)."""
    pids = []
    for template in list(TEMPLATES._templates.values()):
        for pid in descendants(template.process.pid):
            if _is_template(pid) and not _is_template(_parent(pid)):
                pids.append(pid)
    return pids


def _is_template(pid: int) -> bool:
    """``python -I -S /.assay/runner.pyc template ...`` (not bubblewrap, whose arguments end
    with the same words)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return command[1:3] == [b"-I", b"-S"] and command[4:5] == [b"template"]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                children = Path(f"/proc/{current}/task/{task}/children").read_text()
                stack += [int(c) for c in children.split()]
        except OSError:
            continue
    return found


def template_memory(pid: int) -> bytes:
    """Every readable private or anonymous mapping of a template's memory (read as root)."""
    chunks = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if "r" not in fields[1] or (len(fields) > 5 and fields[5].startswith("[v")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except OSError:
                continue
    return b"".join(chunks)
