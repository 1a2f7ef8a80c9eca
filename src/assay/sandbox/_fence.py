"""The fence: a second seccomp filter that keeps checked code off the judge (standard library only).

Checked code runs as the judge's uid in the judge's PID namespace, so the kernel lets it signal
the judge, and a shell check's processes the bash that runs the check. A judge or bash killed or
stopped after the checked code moved a limit counter never writes the check's conclusion, and
the counter then names a limit: a wrong answer turned into ``inconclusive``
(tests/adversarial/test_masking_attacks.py, section 4). Loaded on top of the sandbox's own
(``_seccomp``), never removable: the candidate's process of a python check (the zygote, forked
first) loads one on itself in a session of its own, with ``own_group`` (``kill(0)`` reaches only
its session's groups); the judge then loads one on itself (naming its drain thread's id), which
the programs a check starts (``subprocess.run(["./solve"])``) and bash inherit; bash loads a
third between fork and exec that also names its own pid (``_shellrun``). The judge's own code is
held to it too. The zygote and bash also enter a Landlock signal scope (``scope_signals``), which
keeps them off every thread of the judge, where the kernel has it.

It is built where it is loaded, because it names pids only known there (``protected``: pid 1,
the judge, bash) and the process groups that hold them (``groups``). It refuses (EPERM unless
said otherwise):

- ``kill`` and ``rt_sigqueueinfo`` aimed at a protected pid, at a protected process group
  (``-pgid``), at every process (``-1``), and at the caller's own group (``0``) unless
  ``own_group`` (the filter cannot tell whose group the caller is in: a shell check's processes
  share bash's, which holds bash and the judge; only the zygote, alone in its own session, loads
  it with ``own_group``; elsewhere a process signals a group by its id);
- ``tgkill`` and ``rt_tgsigqueueinfo`` aimed at a protected thread group (a thread of the judge
  with any other group is refused by the kernel);
- ``tkill`` (a bare thread id, which may be one of the judge's threads: C libraries use
  ``tgkill``) and ``pidfd_send_signal`` (a pidfd, or a ``/proc/PID`` folder, names no pid the
  filter can read; ENOSYS, so runtimes fall back to ``kill``, as on kernels before 5.1);
- ``fcntl(F_SETOWN)`` and ``fcntl(F_SETOWN_EX)``, ``ioctl(FIOSETOWN)`` and
  ``ioctl(SIOCSPGRP)``: the owner of a file gets its SIGIO, or any signal ``F_SETSIG`` names,
  SIGKILL included, checked against the owner's uid alone;
- lowering a protected process's priority: ``setpriority`` of a protected pid or group or of
  the whole uid, ``sched_setscheduler`` (SCHED_IDLE), ``sched_setparam``, ``sched_setattr`` and
  ``sched_setaffinity`` of a protected pid: a starved judge is a stall.

Everything else is left to the sandbox's filter: ``ptrace``, ``process_vm_*``, ``pidfd_getfd``,
``prlimit64`` of another process are refused there; ``/proc`` is read-only; a child's exit
signal reaches only its parent (``CLONE_PARENT`` copies the caller's SIGCHLD, and a reparented
child's is reset to SIGCHLD); the template and its run's init are out of reach (``_template``).
Signalling one's own children, threads and process groups (``subprocess`` timeouts,
``os.killpg`` of a group one made, ``kill $!`` in a script) works as before.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LD_W_ABS, _JEQ_K, _RET_K = 0x20, 0x15, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (low 32 bits)
F_SETOWN, F_SETOWN_EX = 8, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902
PRIO_PROCESS, PRIO_PGRP, PRIO_USER = 0, 1, 2
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

_CALLS = (
    "kill", "rt_sigqueueinfo", "tgkill", "rt_tgsigqueueinfo", "tkill", "pidfd_send_signal",
    "fcntl", "ioctl", "setpriority", "sched_setscheduler", "sched_setparam", "sched_setattr",
    "sched_setaffinity",
)  # fmt: skip
_ARCHES = {
    "x86_64": (0xC000003E, (62, 129, 234, 297, 200, 424, 72, 16, 141, 144, 142, 314, 203)),
    "aarch64": (0xC00000B7, (129, 138, 131, 240, 130, 424, 25, 29, 140, 119, 118, 274, 122)),
}
"""AUDIT_ARCH and the numbers of ``_CALLS``, in that order (arch/x86/entry/syscalls/
syscall_64.tbl; include/uapi/asm-generic/unistd.h). Another ABI's calls never get here: the
sandbox's filter kills a process that makes one."""


def program(
    protected: "tuple[int, ...]", groups: "tuple[int, ...]", own_group: bool, machine: str
) -> bytes:
    """The filter (classic BPF, as ``prctl(PR_SET_SECCOMP)`` takes it) for this machine; built
    once per process for the same arguments (a sandbox template builds its judges' ahead)."""
    key = (protected, groups, own_group, machine)
    if key not in _BUILT:
        _BUILT[key] = _program(protected, groups, own_group, machine)
    return _BUILT[key]


_BUILT: "dict[tuple[Any, ...], bytes]" = {}


def _program(
    protected: "tuple[int, ...]", groups: "tuple[int, ...]", own_group: bool, machine: str
) -> bytes:
    if machine not in _ARCHES:
        raise OSError(f"no fence is defined for the {machine} architecture")
    arch, numbers = _ARCHES[machine]
    nr = dict(zip(_CALLS, numbers, strict=True))
    u32 = [v & 0xFFFFFFFF for v in (*protected, -1, *(-g for g in groups))]
    if not own_group:
        u32.append(0)
    targets = tuple(dict.fromkeys(u32))  # kill's pid: its own, -pgid, -1 and maybe 0
    pids = tuple(dict.fromkeys(p & 0xFFFFFFFF for p in protected))
    group_ids = tuple(dict.fromkeys([g & 0xFFFFFFFF for g in groups] + ([] if own_group else [0])))
    code: list[Any] = [
        (_LD_W_ABS, _ARCH, 0, 0),
        (_JEQ_K, arch, 0, "allow"),
        (_LD_W_ABS, _NR, 0, 0),
    ]
    for name in ("kill", "rt_sigqueueinfo"):
        code.append((_JEQ_K, nr[name], "targets", 0))
    for name in ("tgkill", "rt_tgsigqueueinfo", "sched_setscheduler", "sched_setparam"):
        code.append((_JEQ_K, nr[name], "pids", 0))
    for name in ("sched_setattr", "sched_setaffinity"):
        code.append((_JEQ_K, nr[name], "pids", 0))
    code += [
        (_JEQ_K, nr["tkill"], "eperm", 0),
        (_JEQ_K, nr["pidfd_send_signal"], "enosys", 0),
        (_JEQ_K, nr["fcntl"], "fcntl", 0),
        (_JEQ_K, nr["ioctl"], "ioctl", 0),
        (_JEQ_K, nr["setpriority"], "priority", 0),
        (_RET_K, _RET_ALLOW, 0, 0),
    ]
    code += _block("targets", _ARG0, targets)
    code += _block("pids", _ARG0, pids)
    code += [("label", "fcntl", 0, 0), (_LD_W_ABS, _ARG1, 0, 0)]
    code += [(_JEQ_K, F_SETOWN, "eperm", 0), (_JEQ_K, F_SETOWN_EX, "eperm", "allow")]
    code += [("label", "ioctl", 0, 0), (_LD_W_ABS, _ARG1, 0, 0)]
    code += [(_JEQ_K, FIOSETOWN, "eperm", 0), (_JEQ_K, SIOCSPGRP, "eperm", "allow")]
    # setpriority(which, who): a protected pid, a protected group, or every process of the uid.
    code += [("label", "priority", 0, 0), (_LD_W_ABS, _ARG0, 0, 0)]
    code += [(_JEQ_K, PRIO_USER, "eperm", 0), (_JEQ_K, PRIO_PGRP, "priority_group", 0)]
    code += [(_JEQ_K, PRIO_PROCESS, 0, "allow")]
    code += _block(None, _ARG1, pids)
    code += _block("priority_group", _ARG1, group_ids)
    code += [
        ("label", "eperm", 0, 0),
        (_RET_K, _RET_ERRNO | _EPERM, 0, 0),
        ("label", "enosys", 0, 0),
        (_RET_K, _RET_ERRNO | _ENOSYS, 0, 0),
        ("label", "allow", 0, 0),
        (_RET_K, _RET_ALLOW, 0, 0),
    ]
    return _assemble(code)


def _block(label: "str | None", offset: int, values: "tuple[int, ...]") -> "list[Any]":
    """Load an argument; EPERM if it is one of ``values``, else allow."""
    code: list[Any] = [] if label is None else [("label", label, 0, 0)]
    code.append((_LD_W_ABS, offset, 0, 0))
    code += [(_JEQ_K, v, "eperm", 0) for v in values]
    code.append((_RET_K, _RET_ALLOW, 0, 0))
    return code


def _assemble(code: "list[Any]") -> bytes:
    """Resolve the labels into relative jumps and pack the instructions (native order)."""
    at: dict[str, int] = {}
    instructions: list[Any] = []
    for op in code:
        if op[0] == "label":
            at[op[1]] = len(instructions)
        else:
            instructions.append(op)
    out = bytearray()
    for index, (opcode, k, jt, jf) in enumerate(instructions):
        jumps = [at[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
        if not all(0 <= j < 256 for j in jumps):
            raise OSError("the fence's filter has a jump out of range")
        out += opcode.to_bytes(2, sys.byteorder) + bytes(jumps) + k.to_bytes(4, sys.byteorder)
    return bytes(out)


LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446  # the same on x86-64 and arm64
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_SCOPE_SIGNAL, LANDLOCK_SIGNAL_ABI = 1, 0x2, 6


def scope_signals() -> bool:
    """Put this process (and all it starts from now on) in a Landlock domain scoped for
    signals: it can signal only processes of its own domain or one nested in it. Whether it
    could (False: a kernel whose Landlock ABI is below 6, Linux < 6.12, or without Landlock).

    The pid fence cannot name a judge's threads, and ``kill`` or ``rt_sigqueueinfo`` given a
    thread's id signal its whole process: the zygote (before any candidate code) and bash
    (before ``execve``) call this, so neither they nor anything they start can signal the
    judge or any of its threads, pid 1, or send them a SIGIO, by any call (``tkill``,
    ``tgkill``, ``pidfd_send_signal`` included; the kernel's ``task_kill`` and
    ``file_send_sigiotask`` hooks). Calls the thread that makes it only: made while this
    process has one thread. ``no_new_privs`` is already set (``install``)."""
    import _ctypes

    if os.uname().machine not in _ARCHES:
        return False
    syscall = _ctypes.dlsym(_ctypes.dlopen(None), "syscall")  # type: ignore[arg-type]
    call = _ctypes.call_function
    abi = call(syscall, (LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION))
    if not isinstance(abi, int) or abi < LANDLOCK_SIGNAL_ABI:
        return False
    # struct landlock_ruleset_attr: handled_access_fs, handled_access_net, scoped (u64 each).
    attr = (0).to_bytes(16, sys.byteorder) + LANDLOCK_SCOPE_SIGNAL.to_bytes(8, sys.byteorder)
    ruleset = call(syscall, (LANDLOCK_CREATE_RULESET, attr, len(attr), 0))
    if not isinstance(ruleset, int) or ruleset < 0:
        return False
    try:
        return bool(call(syscall, (LANDLOCK_RESTRICT_SELF, ruleset, 0)) == 0)
    finally:
        os.close(ruleset)


def install(protected: "tuple[int, ...]", groups: "tuple[int, ...]", own_group: bool) -> None:
    """Load the fence on this process (and so on all it starts from now on); raises OSError.

    Through ``_ctypes`` (the ctypes package would cost the judge 5 ms of
    imports, and a ctypes array type 0.1 ms to make): ``no_new_privs`` (already set by the
    sandbox; needed for an unprivileged filter), then ``prctl(PR_SET_SECCOMP)`` with a
    ``struct sock_fprog`` that points at the program."""
    import _ctypes

    rules = program(protected, groups, own_group, os.uname().machine)
    if sys.implementation.name != "cpython":
        raise OSError("the fence is loaded by CPython only")
    # CPython keeps a bytes object's data right after its fixed header: the program's address.
    pointer = id(rules) + bytes.__basicsize__ - 1
    word = (sys.maxsize.bit_length() + 1) // 8  # a pointer's size
    fprog = (len(rules) // 8).to_bytes(word, sys.byteorder) + pointer.to_bytes(word, sys.byteorder)
    prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]
    for args in (
        (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog, 0, 0),
    ):
        if _ctypes.call_function(prctl, args) != 0:
            raise OSError(f"the fence could not be loaded (prctl {args[0]})")
