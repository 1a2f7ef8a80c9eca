"""The syscall boundary: sandboxed code cannot reach into another process or change the sandbox.

Checked code and the code that judges it may run as the same uid, so without a filter a
detached child could ``PTRACE_ATTACH`` to the judge and rewrite how it ends (the review turned
bash's final ``exit_group(1)`` into ``exit_group(0)``). Every bubblewrap sandbox now runs under
a seccomp filter (``assay.sandbox._seccomp``) and a read-only /proc. The attack is written out
here and shown to work when the filter is replaced by one that allows everything, so these
tests can fail.
"""

from __future__ import annotations

import errno
import json
import platform
import struct
from pathlib import Path
from typing import Any

import pytest

from assay.sandbox import Limits, Mount, Sandbox, runner_control
from tests.helpers import R, run_kind

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the probes use x86-64 system call numbers"
)

ATTACK = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long
target = int(sys.argv[1])
if libc.ptrace(16, target, None, None) != 0:  # PTRACE_ATTACH
    print("attach refused", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(0)
os.waitpid(target, 0x40000000)  # __WALL
libc.ptrace(0x4200, target, None, ctypes.c_void_p(1))  # PTRACE_SETOPTIONS, TRACESYSGOOD
regs = (ctypes.c_ulonglong * 27)()
pending = 0
while True:
    libc.ptrace(24, target, None, ctypes.c_void_p(pending))  # PTRACE_SYSCALL
    pending = 0
    _, status = os.waitpid(target, 0x40000000)
    if not os.WIFSTOPPED(status):
        break
    if os.WSTOPSIG(status) != (signal.SIGTRAP | 0x80):
        pending = os.WSTOPSIG(status)
        continue
    libc.ptrace(12, target, None, ctypes.byref(regs))  # PTRACE_GETREGS
    if regs[15] == 231:  # orig_rax == exit_group
        regs[14] = 0  # rdi: the exit status
        libc.ptrace(13, target, None, ctypes.byref(regs))  # PTRACE_SETREGS
        libc.ptrace(17, target, None, None)  # PTRACE_DETACH
        break
"""
# A detached child (double fork) attaches to the bash that started it; bash then fails.
SCRIPT = "( python3 /w/attack.py $$ & ); sleep 2; false"

ALLOW_ALL = struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)


@pytest.fixture
def attack(tmp_path: Path) -> Path:
    (tmp_path / "attack.py").write_text(ATTACK)
    tmp_path.chmod(0o755)
    (tmp_path / "attack.py").chmod(0o644)
    return tmp_path


def _bash(folder: Path) -> int | None:
    sandbox = Sandbox(backend="bwrap")
    result = sandbox.run(
        ["/bin/bash", "-c", SCRIPT], mounts=[Mount(folder, "/w")], limits=Limits(timeout=30)
    )
    return result.exit_code


def test_the_attack_works_without_the_filter(attack: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: with an allow-everything filter, the child turns bash's exit 1 into 0."""
    monkeypatch.setattr("assay.sandbox._sandbox.seccomp_program", lambda: ALLOW_ALL)
    assert _bash(attack) == 0


def test_the_filter_stops_it(attack: Path) -> None:
    assert _bash(attack) == 1


@pytest.mark.parametrize("expect_exit", [0, 1])
def test_a_shell_check_under_attack_is_refuted_when_wrong(attack: Path, expect_exit: int) -> None:
    # The work fails (exit 1 when 0 is expected, exit 2 when 1 is); the child tries to flip it.
    wrong = "false" if expect_exit == 0 else "exit_code() { return 2; }; exit_code"
    code = f"( python3 attack.py $$ & ); sleep 2; {wrong}"
    outcome = run_kind("shell", workspace=attack, code=code, expect_exit=expect_exit, timeout=30)
    assert outcome.status is R, outcome.detail


PROBES = r"""
import ctypes, json, mmap, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
sibling = subprocess.Popen(["sleep", "30"])
results = {}
def probe(name, nr, *args):
    ctypes.set_errno(0)
    value = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    results[name] = 0 if value >= 0 else ctypes.get_errno()
buf = ctypes.create_string_buffer(64)
local = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = (ctypes.c_void_p * 2)(0x400000, 64)
probe("ptrace_attach_sibling", 101, 16, sibling.pid, 0, 0)
probe("ptrace_traceme", 101, 0, 0, 0, 0)
probe("process_vm_readv", 310, sibling.pid, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
probe("process_vm_writev", 311, sibling.pid, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
probe("unshare_user", 272, 0x10000000)
probe("clone_newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
probe("clone3", 435, 0, 0)
probe("mount", 165, 0, 0, 0, 0, 0)
probe("bpf", 321, 0, 0, 0)
probe("perf_event_open", 298, 0, 0, -1, -1, 0)
probe("userfaultfd", 323, 0)
probe("keyctl", 250, 0, 0, 0, 0, 0)
probe("io_uring_setup", 425, 1, 0)
probe("personality_no_aslr", 135, 0x0040000)
probe("x32_getpid", 0x40000000 + 39)
probe("kcmp", 312, os.getpid(), sibling.pid, 0, 0, 0)
probe("pidfd_getfd", 438, 0, 0, 0)
probe("setns", 308, 0, 0)
probe("getpid", 39)
probe("personality_query", 135, 0xFFFFFFFF)
try:
    open(f"/proc/{sibling.pid}/mem", "r+b")
    results["proc_mem_write"] = 0
except OSError as exc:
    results["proc_mem_write"] = exc.errno
sibling.kill()
print(json.dumps(results))
"""

EPERM, ENOSYS, EROFS = 1, 38, 30
REFUSED = {
    "ptrace_attach_sibling": EPERM,
    "ptrace_traceme": EPERM,
    "process_vm_readv": EPERM,
    "process_vm_writev": EPERM,
    "unshare_user": EPERM,
    "clone_newuser": EPERM,
    "clone3": ENOSYS,
    "mount": EPERM,
    "bpf": EPERM,
    "perf_event_open": EPERM,
    "userfaultfd": EPERM,
    "keyctl": EPERM,
    "io_uring_setup": ENOSYS,
    "personality_no_aslr": EPERM,
    "x32_getpid": EPERM,
    "kcmp": EPERM,
    "pidfd_getfd": EPERM,
    "setns": EPERM,
}


@pytest.fixture(scope="module")
def probed() -> dict[str, Any]:
    sandbox = Sandbox(backend="bwrap")
    control, nonce = runner_control("python", PROBES, "<probes>", "/tmp")
    result = sandbox.run(sandbox.python_argv(), control=control, nonce=nonce, cwd="/tmp")
    assert result.completed, result.output
    found: dict[str, Any] = json.loads(result.output.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_call_is_refused(probed: dict[str, Any], name: str) -> None:
    assert probed[name] == REFUSED[name], probed


def test_another_process_memory_cannot_be_opened_for_writing(probed: dict[str, Any]) -> None:
    # EROFS: /proc is mounted read-only (any refusal would do; success is the failure)
    assert probed["proc_mem_write"] != 0, probed
    assert probed["proc_mem_write"] in (EROFS, errno.EACCES, errno.EPERM), probed


@pytest.mark.parametrize("name", ["getpid", "personality_query"])
def test_ordinary_calls_still_work(probed: dict[str, Any], name: str) -> None:
    assert probed[name] == 0, probed
