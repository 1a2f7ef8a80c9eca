"""The seccomp filter every bubblewrap sandbox runs under: a classic BPF program built here.

bubblewrap loads it (``--seccomp FD``) just before it starts the sandboxed command, with
``no_new_privs`` set, so the command and everything it starts are held to it; a filter can only
be narrowed later, never removed. No libseccomp: the program is small and generated with
``struct``.

What it refuses, and why (EPERM unless said otherwise):

- **Reaching into another process**: ``ptrace``, ``process_vm_readv``, ``process_vm_writev``,
  ``process_madvise``, ``pidfd_getfd``, ``kcmp``. Checked code and the code that judges it may run
  as the same uid; without these a sandboxed child cannot attach to the judge, read or write its
  memory, or steal its descriptors. (``/proc/PID/mem`` is the same door through the filesystem:
  the sandbox's /proc is mounted read-only, so it cannot be opened for writing.) ``prlimit64``
  only on the caller itself (pid 0, as ``setrlimit``, ``getrlimit`` and ``ulimit`` call it): the
  kernel lets a process change the limits of any process whose uids match its own, dumpable or
  not, so checked code could otherwise lower the judge's limits, or a forked run's init's
  (RLIMIT_CPU: the init killed, its status lost, a refutation turned into assay's ``error``;
  tests/adversarial/test_zygote_init_reach.py).
- **Changing the sandbox itself**: ``unshare``, ``setns``, ``clone`` with any namespace flag,
  ``mount``, ``umount2``, ``pivot_root``, ``chroot``, the new mount API (``fsopen``, ``fsconfig``,
  ``fsmount``, ``fspick``, ``move_mount``, ``open_tree``, ``mount_setattr``), ``open_by_handle_at``
  and ``name_to_handle_at``. A new user namespace would hand checked code capabilities over
  fresh mounts: the kernel's largest attack surface for no use in a check.
- **The kernel's large or privileged interfaces**: ``bpf``, ``perf_event_open``,
  ``userfaultfd`` (stalls the kernel at a chosen page: the classic race amplifier),
  ``keyctl``/``add_key``/``request_key`` (keyrings are not namespaced), ``io_uring_setup``/
  ``_enter``/``_register`` (its operations are not seen by seccomp at all; ENOSYS, so programs
  fall back to ordinary calls), module and kexec calls, ``reboot``, ``swapon``/``swapoff``,
  ``acct``, clock setting, ``syslog``, ``quotactl``, ``fanotify_init``, ``lookup_dcookie``,
  ``vhangup``, ``iopl``/``ioperm``, host and domain names, and long-removed calls.
- **Sockets of families the network namespace does not isolate**: ``socket`` and
  ``socketpair`` answer EAFNOSUPPORT for every family but AF_UNIX, AF_INET and AF_INET6.
  ``--unshare-net`` leaves the sandbox only a loopback for IP, but AF_VSOCK reaches the
  hypervisor or local vsock services on kernels without vsock namespaces, and AF_PACKET,
  AF_NETLINK, AF_BLUETOOTH and the rest are kernel surface no check needs (glibc's
  ``getaddrinfo`` treats a refused netlink socket as "both IP versions available").
- ``clone3`` answers ENOSYS (its flags sit behind a pointer the filter cannot read), and the C
  library falls back to ``clone``, whose flags it can.
- ``personality`` only with the values container runtimes allow (Linux, UNAME26, 32-bit and the
  query): ``ADDR_NO_RANDOMIZE`` and ``READ_IMPLIES_EXEC`` would weaken the process's defences.
- A system call of another ABI (i386 ``int 0x80`` on x86-64, arm32 on arm64) kills the process:
  numbers differ between ABIs, so a denial listed for one is no denial for another. x32 calls
  (numbers from 0x40000000) are refused on x86-64 for the same reason.

Everything else is allowed: this is a filter against escape and interference, not a whitelist of
what a check may do. Signals to the judge are refused by a second filter, the fence
(``_fence``), which the checked code's processes alone carry: it names pids only known inside
the run. Architectures other than x86-64 and arm64 get no filter; building one raises
``SeccompUnsupported`` (the caller refuses untrusted code rather than run it unfiltered).
"""

from __future__ import annotations

import errno
import platform
import struct
from functools import lru_cache

# Classic BPF opcodes and seccomp constants (linux/filter.h, linux/seccomp.h, linux/audit.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

_CLONE_NAMESPACES = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)
_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

_DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "kcmp",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "fanotify_init",
    "lookup_dcookie",
    "vhangup",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "nfsservctl",
)
_SOCKET_FAMILIES = (1, 2, 10)
"""AF_UNIX, AF_INET, AF_INET6: the families a check may open sockets of."""
_NOT_AVAILABLE = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")

# System call numbers per architecture: x86-64 (arch/x86/entry/syscalls/syscall_64.tbl) and
# arm64 (include/uapi/asm-generic/unistd.h, which has no legacy calls).
_X86_64 = {
    "clone": 56, "ptrace": 101, "syslog": 103, "uselib": 134, "personality": 135, "ustat": 136,
    "sysfs": 139, "vhangup": 153, "pivot_root": 155, "_sysctl": 156, "adjtimex": 159,
    "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171,
    "iopl": 172, "ioperm": 173, "create_module": 174, "init_module": 175,
    "delete_module": 176, "get_kernel_syms": 177, "query_module": 178, "quotactl": 179,
    "nfsservctl": 180, "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
    "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443, "socket": 41, "socketpair": 53, "prlimit64": 302,
}  # fmt: skip
_AARCH64 = {
    "lookup_dcookie": 18, "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51,
    "vhangup": 58, "quotactl": 60, "acct": 89, "personality": 92, "unshare": 97,
    "kexec_load": 104, "init_module": 105, "delete_module": 106, "clock_settime": 112,
    "syslog": 116, "ptrace": 117, "reboot": 142, "sethostname": 161, "setdomainname": 162,
    "settimeofday": 170, "adjtimex": 171, "add_key": 217, "request_key": 218, "keyctl": 219,
    "clone": 220, "swapon": 224, "swapoff": 225, "perf_event_open": 241, "fanotify_init": 262,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
    "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "finit_module": 273,
    "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
    "socket": 198, "socketpair": 199, "prlimit64": 261,
}  # fmt: skip
_ARCHES = {
    "x86_64": (0xC000003E, _X86_64, True),  # AUDIT_ARCH_X86_64; x32 numbers to refuse
    "aarch64": (0xC00000B7, _AARCH64, False),  # AUDIT_ARCH_AARCH64
}


class SeccompUnsupported(Exception):
    """No filter is defined for this machine's architecture."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _ret(action: int) -> bytes:
    return _op(_RET_K, action)


def _deny(nr: int, action: int) -> bytes:
    """If the loaded number is ``nr``, return ``action``; else fall through."""
    return _op(_JEQ_K, nr, 0, 1) + _ret(action)


@lru_cache(maxsize=2)
def program(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (default: this one), as bwrap's --seccomp expects it."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        raise SeccompUnsupported(
            f"no seccomp filter is defined for the {machine} architecture (x86_64 and aarch64 are)"
        )
    audit_arch, numbers, has_x32 = _ARCHES[machine]
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    code = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, audit_arch, 1, 0),
        _ret(_RET_KILL_PROCESS),
        _op(_LD_W_ABS, _NR),
    ]
    if has_x32:
        code += [_op(_JGE_K, 0x40000000, 0, 1), _ret(eperm)]
    code += [_deny(numbers[name], eperm) for name in _DENIED if name in numbers]
    code += [_deny(numbers[name], enosys) for name in _NOT_AVAILABLE]
    # clone: refused with any namespace flag (the flags are its first argument on both arches).
    code += [
        _op(_JEQ_K, numbers["clone"], 0, 3),
        _op(_LD_W_ABS, _ARG0_LOW),
        _op(_JSET_K, _CLONE_NAMESPACES, 0, 1),
        _ret(eperm),
        _op(_LD_W_ABS, _NR),
    ]
    # prlimit64: only on the caller itself (pid 0).
    code += [
        _op(_JEQ_K, numbers["prlimit64"], 0, 3),
        _op(_LD_W_ABS, _ARG0_LOW),
        _op(_JEQ_K, 0, 1, 0),
        _ret(eperm),
        _op(_LD_W_ABS, _NR),
    ]
    # socket, socketpair: only the families the network namespace isolates (or local ones).
    families = _SOCKET_FAMILIES
    for name in ("socket", "socketpair"):
        code += [_op(_JEQ_K, numbers[name], 0, len(families) + 3), _op(_LD_W_ABS, _ARG0_LOW)]
        code += [_op(_JEQ_K, f, len(families) - i, 0) for i, f in enumerate(families)]
        code += [_ret(_RET_ERRNO | errno.EAFNOSUPPORT), _op(_LD_W_ABS, _NR)]
    # personality: only the harmless values; anything else is refused.
    allowed = len(_PERSONALITIES)
    code += [_op(_JEQ_K, numbers["personality"], 0, allowed + 2), _op(_LD_W_ABS, _ARG0_LOW)]
    code += [_op(_JEQ_K, value, allowed - i, 0) for i, value in enumerate(_PERSONALITIES)]
    code += [_ret(eperm), _ret(_RET_ALLOW)]
    return b"".join(code)


def denied_calls() -> tuple[str, ...]:
    """The system calls the filter refuses outright (for docs and tests)."""
    return tuple(_DENIED) + _NOT_AVAILABLE
