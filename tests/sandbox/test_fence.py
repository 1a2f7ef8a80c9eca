"""The fence (``_fence``): what checked code may still signal, and the filter itself.

The fence refuses signals to the judge, bash, pid 1 and their process group (the attacks are in
tests/adversarial/test_judge_signals.py). These tests hold the other side: a candidate that
signals its own children, threads, process groups and itself, and a shell check that kills its
own background jobs or runs ``timeout``, keep working on both run paths.
"""

from __future__ import annotations

import errno
import os
import signal
import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Outcome, build_check
from assay.sandbox import Sandbox, _fence
from tests.adversarial.code_checks import workspace
from tests.helpers import V

PATHS = pytest.mark.parametrize("zygote", [True, False], ids=["template", "bwrap"])


@lru_cache(maxsize=2)
def _sandbox(zygote: bool) -> Sandbox:
    return Sandbox(backend="bwrap", zygote=zygote)


def run(root: Path, files: dict[str, str], spec: dict[str, Any], zygote: bool) -> Outcome:
    spec = {"timeout": 20, **spec}
    spec["code"] = textwrap.dedent(spec["code"])
    ws = workspace(root, files)
    return build_check(spec).run(CheckContext(workspace=ws, sandbox=_sandbox(zygote)))


SIGNALLING = """
import os, signal, subprocess, sys, threading, time

def subprocess_timeout():
    try:
        subprocess.run(["sleep", "30"], timeout=0.3)
    except subprocess.TimeoutExpired:
        return "timed out"
    return "ran"

def kill_a_child():
    child = subprocess.Popen(["sleep", "30"])
    child.terminate()
    return child.wait()

def kill_a_group_it_made():
    child = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30"], start_new_session=True)
    os.killpg(child.pid, signal.SIGKILL)
    return child.wait()

def kill_its_own_group():
    got = []
    signal.signal(signal.SIGUSR1, lambda *_: got.append("group"))
    os.killpg(os.getpgrp(), signal.SIGUSR1)  # its own: it is in a session of its own
    os.kill(0, signal.SIGUSR1)  # its group is its own session's: allowed in this process
    os.killpg(0, signal.SIGUSR1)
    return got

def signal_itself():
    got = []
    signal.signal(signal.SIGUSR2, lambda *_: got.append("self"))
    os.kill(os.getpid(), signal.SIGUSR2)
    signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR2)
    signal.raise_signal(signal.SIGUSR2)
    return got

def alarm():
    got = []
    signal.signal(signal.SIGALRM, lambda *_: got.append("alarm"))
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    time.sleep(0.5)
    return got

def multiprocessing_terminate():
    import multiprocessing
    worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
    worker.start()
    worker.terminate()
    worker.join()
    return worker.exitcode
"""

CHECK = """
from solution import *
assert subprocess_timeout() == "timed out"
assert kill_a_child() == -15
assert kill_a_group_it_made() == -9
assert kill_its_own_group() == ["group", "group", "group"]
assert signal_itself() == ["self", "self", "self"]
assert alarm() == ["alarm"]
assert multiprocessing_terminate() == -15
"""


@PATHS
def test_a_candidate_still_signals_what_is_its_own(zygote: bool, tmp_path: Path) -> None:
    outcome = run(tmp_path, {"solution.py": SIGNALLING}, {"kind": "python", "code": CHECK}, zygote)
    assert outcome.status is V, outcome.detail


SOLVE = """#!/bin/bash
sleep 30 &
kill $!
wait $!
echo "background $?"
timeout 0.3 sleep 30
echo "timeout $?"
python3 -c 'import subprocess
try: subprocess.run(["sleep", "30"], timeout=0.3)
except subprocess.TimeoutExpired: print("python timed out")'
"""
SHELL_CHECK = """
out=$(./solve.sh)
[ "$out" = "$(printf 'background 143\\ntimeout 124\\npython timed out')" ] || exit 3
sleep 30 &
kill %1
wait %1
[ $? = 143 ] || exit 4
sleep 30 &
pid=$!
kill -KILL $pid
wait $pid
[ $? = 137 ] || exit 5
"""


@PATHS
def test_a_shell_check_still_kills_its_own_jobs(zygote: bool, tmp_path: Path) -> None:
    files = {"solve.sh": SOLVE}
    outcome = run(tmp_path, files, {"kind": "shell", "code": SHELL_CHECK}, zygote)
    assert outcome.status is V, outcome.detail


@PATHS
def test_kill_0_is_refused_in_a_shell_check(zygote: bool, tmp_path: Path) -> None:
    """A shell check's processes share bash's process group, which holds bash and the judge:
    ``kill 0`` is refused there (documented), and the check goes on."""
    code = 'kill -TERM 0 2>/dev/null && exit 9\necho "still here"'
    outcome = run(tmp_path, {}, {"kind": "shell", "code": code}, zygote)
    assert outcome.status is V, outcome.detail


@PATHS
def test_a_python_check_still_ends_what_it_starts(zygote: bool, tmp_path: Path) -> None:
    """The judge of a python check carries the fence too (for the programs it starts): it still
    times out and kills its children; only its own process, pid 1 and its group are refused."""
    code = """
    import os, subprocess
    try:
        subprocess.run(["sleep", "30"], timeout=0.3)
        raise SystemExit("not timed out")
    except subprocess.TimeoutExpired:
        pass
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    os.killpg(child.pid, 9)
    assert child.wait() == -9
    for refused in (lambda: os.kill(0, 0), lambda: os.kill(os.getpid(), 0)):
        try:
            refused()
            raise SystemExit("allowed")
        except PermissionError:
            pass
    """
    outcome = run(tmp_path, {}, {"kind": "python", "code": code}, zygote)
    assert outcome.status is V, outcome.detail


def _in_a_child(protected: tuple[int, ...], groups: tuple[int, ...], own_group: bool) -> int:
    """Fork; in the child, load the fence and report, as its exit status, which attempts were
    refused (a bit per attempt); the parent is protected when ``protected`` says so."""
    parent, nice = os.getpid(), os.getpriority(os.PRIO_PROCESS, 0)
    pid = os.fork()
    if pid == 0:
        bits = 0
        try:
            _fence.install(protected, groups, own_group)
            attempts = [
                lambda: os.kill(parent, 0),
                lambda: os.kill(-1, 0),
                lambda: os.kill(0, 0),
                lambda: os.kill(os.getpid(), 0),
                lambda: os.setpriority(os.PRIO_PROCESS, parent, nice),  # unchanged if allowed
            ]
            for bit, attempt in enumerate(attempts):
                try:
                    attempt()
                except OSError as exc:
                    bits |= (1 << bit) if exc.errno == errno.EPERM else 0
        finally:
            os._exit(bits)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_the_fence_protects_what_it_names() -> None:
    me = os.getpid()
    assert _in_a_child((me,), (), True) == 0b10011  # the parent, everyone, its priority
    assert _in_a_child((me,), (), False) == 0b10111  # and the caller's own group
    assert _in_a_child((me + 100_000,), (), True) == 0b00010  # only everyone


def test_an_unknown_architecture_has_no_fence() -> None:
    with pytest.raises(OSError, match="no fence"):
        _fence.program((1,), (), True, "sparc64")


def test_the_program_is_the_same_for_both_architectures() -> None:
    """Same shape (only numbers differ): every jump resolves, every instruction is 8 bytes."""
    for machine in ("x86_64", "aarch64"):
        code = _fence.program((1, 2, 4), (1,), False, machine)
        assert len(code) % 8 == 0 and 20 < len(code) // 8 < 120
    assert signal.SIGKILL == 9  # the attacks' numbers are Linux's


def _landlock_abi() -> int:
    import ctypes

    return int(ctypes.CDLL(None).syscall(_fence.LANDLOCK_CREATE_RULESET, None, 0, 1))


def test_the_signal_scope_keeps_a_process_off_its_parents_threads() -> None:
    """``scope_signals`` in a forked child: its parent's pid and a parent thread's id refused
    (``kill`` given a thread's id signals the whole process), its own child still reachable;
    without Landlock signal scoping (ABI < 6) it says it could not, and changes nothing."""
    import threading

    parked = threading.Event()
    thread = threading.Thread(target=parked.wait)
    thread.start()
    try:
        parent, tid = os.getpid(), thread.native_id
        assert tid is not None
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's result is its exit status
            bits = 0
            try:
                scoped = _fence.scope_signals()
                for n, target in enumerate((parent, tid)):
                    try:
                        os.kill(target, 0)
                    except PermissionError:
                        bits |= 1 << n
                child = os.fork()
                if child == 0:
                    signal.pause()
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                bits |= 4 | (8 if scoped else 0)
            finally:
                os._exit(bits)
        _, status = os.waitpid(pid, 0)
    finally:
        parked.set()
        thread.join()
    got = os.waitstatus_to_exitcode(status)
    if _landlock_abi() >= _fence.LANDLOCK_SIGNAL_ABI:
        assert got == 0b1111
    else:
        assert got == 0b0100
