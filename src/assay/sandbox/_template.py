"""The sandbox template: a judge already started, which forks a fresh sandbox for each check.

Started once per sandbox shape as ``python -I -S /.assay/runner.pyc template SOCKET`` inside a
bubblewrap sandbox of its own (``_forked.Template``): the same read-only system, judge folder and
mounts every judge run has, its own PID, network, IPC and UTS namespaces, as root with only the
capabilities it needs to make the next sandbox (no seccomp filter: its children load it). Only
trusted code ever runs in it: the interpreter's start-up, the runner's definitions (its
``main`` never runs here) and this loop. It never reads a control message, so it never holds a
run's nonce, a check's code or any byte of a workspace; what it receives is the verifier's
request (limits, environment, folder target, the seccomp program) and the run's descriptors.

For each request it makes a new PID namespace for its next child (``unshare(CLONE_NEWPID)``,
then back to its own), forks, and answers the request (``FORKED``). The child, pid 1 of that namespace, is the run's init
(``_run``); before anything of the check exists it:

1. joins the run's cgroup (memory, pids, CPU: ``0``, itself, written to the cgroup's ``tasks``
   files through descriptors the verifier opened), becomes a session leader, sets the run's
   rlimits;
2. makes fresh mount, network, IPC, UTS and cgroup namespaces, makes every mount private,
   attaches the run's folder read-only at its target (a detached mount the verifier made from
   its folder: no other run's folder is ever visible), mounts a fresh size-capped ``/tmp`` and ``/dev/shm``, a
   fresh ``/dev/pts`` and a fresh read-only ``/proc`` for its PID namespace, and brings up the
   loopback of its network namespace (as bubblewrap's ``--unshare-net`` does);
3. keeps only its output pipe (stdout and stderr), ``/dev/null`` as stdin, the control and done
   pipes and the status pipe, clears the environment to the run's, empties the bounding set
   and the groups;
4. forks the judge. The judge drops to uid and gid 65534 with no capability in any set, sets
   ``no_new_privs``, loads the seccomp filter, waits until the init has dropped too, forgets
   the modules only the template needed and runs the runner's ``main`` exactly as a freshly
   started judge would. The init stays uid 0, as bubblewrap's init does, but with no capability
   in any set, ``no_new_privs``, the same filter and not dumpable, so the checked code's uid
   can neither signal it nor change its limits, priority or affinity; no signal from inside
   reaches it (pid 1 gets only those it handles: none). It reaps orphans, and when the judge
   exits it writes the judge's exit status (128 + a signal, as bubblewrap) to the status pipe,
   which nothing else holds, and exits: the kernel then kills every process left in the
   namespace.

What the check cannot reach: the template is root in another PID namespace (no pid to signal,
no ``/proc`` entry), its memory is only ever copied (copy-on-write) into a child, every
descriptor it holds is closed in the child, and every mount the child makes is its own. The
template's interpreter state (hash secret, address layout) is the same in every check it
forks; the candidate's process is itself a fork of the judge, so a candidate already knows both
within its own check. A template serves a bounded number of checks and is then replaced.
"""

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAP_AMBIENT = 38, 22, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
MOVE_MOUNT, AT_FDCWD, MOVE_MOUNT_F_EMPTY = 429, -100, 4
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
SANDBOX_ID = 65534
TEMPLATE_CAPS = (6, 7, 8, 12, 21, 24)
"""CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_SYS_RESOURCE: the
template's (``_sandbox._TEMPLATE_CAPS``); ``_narrow`` drops any other bubblewrap left."""
STATUS_FD = 5
"""Where the run's init keeps the status pipe (the judge's own descriptors are 0 to 4)."""
FORKED = b"k"
"""The template's answer to each request, once its child is forked (or could not be): a
template that does not answer in time is killed and replaced (``_forked.Template.fork``)."""
STARTING_FAILED = 71
"""Exit status of a child that could not make its sandbox (assay's failure, never a verdict)."""


def serve(
    sock_fd: int, judge: "Callable[[], None]", preload: "Callable[[], None]", site: "list[str]"
) -> None:
    """Answer requests on ``sock_fd`` (a unix seqpacket socket) until the verifier closes it.

    ``judge``: the runner's ``main``, which each run's judge calls; ``preload``: the runner's
    own files read and unmarshalled once here, not in every run; ``site``: the site-packages
    folders every judge looks modules up in, listed once here (the import system's caches)."""
    template_only = set(sys.modules)
    import _signal  # type: ignore[import-not-found]  # the C module: no enum, no handlers' cost
    import _socket
    import ctypes
    import gc

    libc = ctypes.CDLL(None, use_errno=True)
    _narrow(libc, ctypes)
    with open("/proc/sys/kernel/cap_last_cap") as last:
        last_cap = int(last.read())
    own_pids = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    template_only = set(sys.modules) - template_only
    preload()
    sys.meta_path[-1].find_spec("assay-none", site)
    sock = _socket.socket(fileno=sock_fd)
    _signal.signal(_signal.SIGCHLD, lambda *_: _reap())  # runs while recvmsg waits
    tools = (libc, ctypes, _socket, _signal, last_cap, template_only)
    gc.collect()
    gc.freeze()  # what exists now is never collected: no child copies these pages to scan them
    while True:
        message, ancillary, _, _ = sock.recvmsg(1 << 16, _socket.CMSG_SPACE(64 * 4))
        if not message:  # retired: no more runs; those in progress end as they would
            _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
            _reap(block=True)
            os._exit(0)
        fds: list[int] = []
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                usable = len(data) - len(data) % 4
                fds += [int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
        # The next child is pid 1 of a new PID namespace: its own, for this run alone.
        pid = -1
        if libc.unshare(CLONE_NEWPID) == 0:
            try:
                pid = os.fork()
            except OSError:
                pid = -1
            # Back to our own for the next unshare (only allowed from the active namespace).
            if pid != 0 and libc.setns(own_pids, CLONE_NEWPID) != 0:
                os._exit(STARTING_FAILED)  # the verifier starts another template
        if pid == 0:
            try:
                _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                sock.detach()  # its descriptor is closed below, never through this object
                _run(marshal.loads(message), fds, tools, judge)
            finally:
                os._exit(STARTING_FAILED)
        for fd in fds:  # the run's descriptors are the child's alone
            os.close(fd)
        try:  # noqa: SIM105 - the request was handled: the verifier waits for this (_forked)
            sock.send(FORKED)
        except OSError:
            pass


def _reap(block: bool = False) -> None:
    """Reap the children that ended (``block``: wait for every one)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


def _run(
    request: "dict[str, Any]", fds: "list[int]", tools: "Any", judge: "Callable[[], None]"
) -> None:
    """The run's init (pid 1 of its PID namespace): join the run's cgroup, make its other
    namespaces and mounts, drop every privilege, fork the judge, report how it ended."""
    libc, ctypes, _socket, _signal, last_cap, template_only = tools
    status, output, control, done, folder = fds[:5]
    tasks = fds[5:]
    if len(tasks) != request["tasks"]:
        raise SystemExit  # never run outside the run's cgroup
    try:
        for fd in tasks:  # "0": this process, alone (v1 ``tasks``; v2 ``cgroup.procs``)
            os.write(fd, b"0")
            os.close(fd)
    except OSError:
        os.write(status, b"125")  # _prepared.JOIN_FAILED: the verifier sees no CPU charged
        os._exit(0)
    try:
        os.setsid()
        for which, soft, hard in request["rlimits"]:
            limit = (ctypes.c_ulong * 2)(soft, hard)
            _check(libc.setrlimit(which, limit), ctypes, "setrlimit")
        flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
        _check(libc.unshare(flags), ctypes, "unshare")
        _sandbox(request, folder, libc, ctypes, _socket)
        _descriptors(output, control, done, status)
        status, output = STATUS_FD, 2
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        for cap in range(last_cap + 1):  # nothing either process execs can gain any
            _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), ctypes, "PR_CAPBSET_DROP")
        os.setgroups([])
        held, dropped = os.pipe()  # the judge waits for its end of file: the init dropped
    except BaseException as exc:  # assay's failure: said on the run's output, never a verdict
        os.write(output, f"assay: the sandbox template could not start the run: {exc!r}\n".encode())
        raise
    # This init is out of the checked code's reach, as bubblewrap's root init is: it stays uid
    # 0 (with no capability left), so the checked code's uid can neither signal it, nor change
    # its limits or priority, nor open its /proc entries; no signal from inside the namespace
    # reaches it (pid 1 gets only the signals it handles: none); and it is not dumpable.
    handlers = {}
    for number in _signal.valid_signals():
        handler = _signal.getsignal(number)
        if callable(handler):  # a default action is never taken for pid 1 from inside
            handlers[number] = _signal.signal(number, _signal.SIG_IGN)
    seccomp = request["seccomp"]
    judge_pid = os.fork()
    if judge_pid:  # reap every orphan, as bubblewrap's init does; end with the judge
        try:
            _drop(libc, ctypes, seccomp, 0)
            _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), ctypes, "dumpable")
        except BaseException:
            os.kill(judge_pid, _signal.SIGKILL)  # never a judge beside a privileged init
            os._exit(STARTING_FAILED)
        # Every descriptor but the status pipe closed, ``dropped`` too: the judge may start,
        # nothing privileged is left in the run.
        os.closerange(0, status)
        os.closerange(status + 1, 1 << 20)
        while True:
            try:
                pid, waited = os.wait()
            except InterruptedError:
                continue
            except ChildProcessError:
                os._exit(STARTING_FAILED)
            if pid == judge_pid:
                code = os.waitstatus_to_exitcode(waited)  # as bubblewrap: 128 + a signal
                os.write(status, str(code if code >= 0 else 128 - code).encode())
                os._exit(0)
    os.close(status)
    os.close(dropped)
    try:
        _drop(libc, ctypes, seccomp, SANDBOX_ID)
        # A started judge is dumpable until its main() makes itself not (its candidate's
        # process, forked first, stays dumpable, as an exec'd process of the sandbox uid is).
        _check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), ctypes, "dumpable")
        if os.read(held, 1):  # end of file once the init has dropped its privileges
            raise OSError("the run's init did not drop its privileges")
    except BaseException as exc:
        os.write(2, f"assay: the sandbox template could not start the run: {exc!r}\n".encode())
        raise
    os.close(held)
    for number, handler in handlers.items():  # the judge's, as a started interpreter's
        if handler is not None:
            _signal.signal(number, handler)
    for name in template_only:
        sys.modules.pop(name, None)
    sys.argv = [sys.argv[0], "3", "4"]
    judge()


def _check(result: int, ctypes: "Any", what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what} failed in the sandbox template")


def _sandbox(
    request: "dict[str, Any]", folder: int, libc: "Any", ctypes: "Any", sock: "Any"
) -> None:
    """The judge's own mounts and loopback (pid 1 of the new PID namespace, still root)."""

    def mount(
        source: "bytes | None",
        target: str,
        kind: "bytes | None",
        flags: int,
        data: "bytes | None" = None,
    ) -> None:
        _check(libc.mount(source, target.encode(), kind, flags, data), ctypes, f"mount {target}")

    mount(None, "/", None, MS_REC | MS_PRIVATE)
    target = request["folder_at"]
    if target is not None:  # the verifier's read-only copy of the run's folder, attached here
        moved = libc.syscall(MOVE_MOUNT, folder, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY)
        _check(moved, ctypes, f"move_mount {target}")
    os.close(folder)
    tmp = f"size={request['tmp_bytes']},mode=1777".encode()
    mount(b"tmpfs", "/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, tmp)
    mount(b"tmpfs", "/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, tmp)  # sem_open, shm_open
    pts = b"newinstance,ptmxmode=0666,mode=620"
    mount(b"devpts", "/dev/pts", b"devpts", MS_NOSUID | MS_NOEXEC, pts)
    proc = MS_NOSUID | MS_NODEV | MS_NOEXEC
    mount(b"proc", "/proc", b"proc", proc)
    mount(None, "/proc", None, MS_REMOUNT | MS_BIND | MS_RDONLY | proc)
    loopback = sock.socket(sock.AF_INET, sock.SOCK_DGRAM)
    try:
        request_buffer = ctypes.create_string_buffer(b"lo", 40)
        _check(libc.ioctl(loopback.fileno(), SIOCGIFFLAGS, request_buffer), ctypes, "SIOCGIFFLAGS")
        flags = int.from_bytes(request_buffer.raw[16:18], sys.byteorder) | IFF_UP
        request_buffer[16:18] = flags.to_bytes(2, sys.byteorder)
        _check(libc.ioctl(loopback.fileno(), SIOCSIFFLAGS, request_buffer), ctypes, "SIOCSIFFLAGS")
    finally:
        loopback.close()


def _descriptors(output: int, control: int, done: int, status: int) -> None:
    """stdin /dev/null, stdout and stderr the output pipe, control 3, done 4 (the judge's), the
    status pipe 5 (the init's); nothing else."""
    null = os.open("/dev/null", os.O_RDONLY)
    moved = [os.dup(fd) for fd in (null, output, control, done, status)]
    for number, fd in enumerate((moved[0], moved[1], moved[1], moved[2], moved[3], moved[4])):
        os.dup2(fd, number, inheritable=number < STATUS_FD)
    os.closerange(STATUS_FD + 1, 1 << 20)


def _narrow(libc: "Any", ctypes: "Any") -> None:
    """Keep only ``TEMPLATE_CAPS`` (effective and permitted; nothing inheritable or ambient).

    bubblewrap run by real root ignores a failing ``capset``: asked for one capability outside
    the verifier's bounding set (CAP_SYS_RESOURCE in many containers), it leaves every one in
    place, in the host's user namespace (tests/adversarial/test_zygote_privilege_scope.py)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # (effective, permitted, inheritable) for caps 0-31, 32-63
    _check(libc.capget(header, data), ctypes, "capget")
    keep = sum(1 << cap for cap in TEMPLATE_CAPS)
    for word in (0, 1):
        mask = keep >> (32 * word) & 0xFFFFFFFF
        data[3 * word] &= mask
        data[3 * word + 1] &= mask
        data[3 * word + 2] = 0
    _check(libc.capset(header, data), ctypes, "capset")


def _drop(libc: "Any", ctypes: "Any", seccomp: bytes, uid: int) -> None:
    """Leave this process as setpriv and bubblewrap leave the judge: uid and gid ``uid`` (the
    bounding set is already empty and the groups cleared), no capability in any set,
    ``no_new_privs``, the seccomp filter loaded. With ``uid`` 0 (the run's init, root as
    bubblewrap's is) the same without the uid change: root holding no capability."""
    if uid != 0:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty
    _check(libc.capset(header, data), ctypes, "capset")
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), ctypes, "ambient")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), ctypes, "no_new_privs")
    _check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), ctypes, "pdeathsig")
    rules = ctypes.create_string_buffer(seccomp, len(seccomp))
    # struct sock_fprog: the number of instructions, then a pointer to them (native layout)
    program = ctypes.create_string_buffer(
        (len(seccomp) // 8).to_bytes(ctypes.sizeof(ctypes.c_void_p), sys.byteorder)
        + ctypes.addressof(rules).to_bytes(ctypes.sizeof(ctypes.c_void_p), sys.byteorder)
    )
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program, 0, 0), ctypes, "seccomp")
    if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3 or os.getgroups():
        raise OSError(f"the sandbox template could not drop to uid {uid}")
