"""A ``shell`` check: bash runs the check's code as a child of the judge (standard library only).

Nothing of the harness is in that shell while the check runs: no variable, no function, and no
command before the check's last line. Bash reads the script from a private memory file (closed
by the script's first line, never on its command line or in its environment). The script's last
line is built only of keywords, an assignment and a redirection,

    { TIMEFORMAT="<token> $?"; time [[ 1 ]]; } 2>&99

so no function or disabled builtin can change what it does: it writes a per-run token and the
status of the check's last command to a datagram socket. Only a datagram sent by bash's own
process counts (the kernel attaches the sender's pid), so a process the check starts, which
inherits the socket, cannot write the report. A readonly TIMEFORMAT, a function named printf,
exit, builtin or trap, ``set -e`` or an ``exit`` in a script the check sources can only keep the
report from being written (refuted), never write a passing one. That socket is shared: every
process the check starts inherits bash's end (descriptor 99), and its state is one for all of
them. So the judge stops its reader through its own end, which no other process holds (shut
down for reading: the queue is read to its end), and once bash has exited it checks that bash's
end is still as it made it: blocking, still writable (a send that never blocks), still leading
to the judge (that send arrives), and written by nobody but bash. Anything else is tampering
with the judge's channel (``run``'s third value), which the judge reports as a finding
(refuted), whatever limit counters moved: a lost report can never turn into a limit. Bash is non-dumpable when the
sandbox mounts a copy it cannot read at ``/.assay/bash`` (so the processes it starts cannot read
its memory or its descriptors).

What this does not cover: a script the check *sources* (``. ./solve.sh``) runs inside that shell
and controls it entirely; deliberately, it can read bash's own script (descriptor 255) for the
token and write the report itself. Run candidate scripts as processes (``bash ./solve.sh``,
``./solve.sh``) and check what they print or exit with.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REPORT_FD, SCRIPT_FD = 99, 98
DRAIN_WAIT = 5.0  # seconds: the report channel's queue is read to its end well before
PROTECTED_BASH = "/.assay/bash"


def run(
    code: str, fence: "dict[str, Any]", worker: "tuple[int, Any] | None" = None
) -> tuple[int, bool, str]:
    """(the check's status, whether bash reached the check's last line, and why the report
    channel is not to be believed, or "" when it is).

    ``fence``: the ``_fence`` module, loaded on bash between fork and exec (its pid fence,
    then its Landlock signal scope where the kernel has one). ``worker``: (its id, ``start``)
    of the judge's parked thread (``_runner._parked_thread``), which drains the report: bash's
    fence names that id too (for kernels without Landlock signal scoping). Raises OSError when
    bash could not be started fenced (assay's failure: nothing of the check ran)."""
    import _socket
    import _thread

    token = os.urandom(16).hex()
    script = (
        f"exec {SCRIPT_FD}<&-\n{code}\n"
        f'{{ TIMEFORMAT="{token} $?"; time [[ 1 ]]; }} 2>&{REPORT_FD}\n'
    ).encode("utf-8", "surrogateescape")
    script_fd = os.memfd_create("check", os.MFD_CLOEXEC)
    os.write(script_fd, script)
    os.lseek(script_fd, 0, os.SEEK_SET)
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_DGRAM)
    ours.setsockopt(_socket.SOL_SOCKET, _socket.SO_PASSCRED, 1)
    bash = PROTECTED_BASH if os.path.exists(PROTECTED_BASH) else "/bin/bash"
    threads = () if worker is None else (worker[0],)
    pid = _spawn(bash, script_fd, theirs.fileno(), fence, threads)
    reports: list[bytes] = []
    others: list[int] = []  # senders that are neither bash nor this process
    probe = b"probe " + os.urandom(16).hex().encode()
    probed = [False]
    stopping = [False]
    drained = _thread.allocate_lock()
    drained.acquire()
    me = os.getpid()

    def drain() -> None:
        try:
            while True:
                data, ancillary, _, _ = ours.recvmsg(256, 64)
                if stopping[0] and not data and not ancillary:
                    return  # ``ours`` was shut down and its queue is empty
                sender = _sender(ancillary, _socket)
                if sender == me and data == probe:
                    probed[0] = True
                elif sender == pid:
                    if len(reports) < 16:
                        reports.append(data)
                elif len(others) < 16:
                    others.append(sender)
        except BaseException:
            others.append(-1)
        finally:
            drained.release()

    (_thread.start_new_thread if worker is None else worker[1])(drain, ())
    _, wait_status = os.waitpid(pid, 0)
    broken = _probe(theirs, probe, _socket)
    # Stopped through ``ours``, which only this process holds: shut down for reading, it
    # takes no more datagrams, its queue is read to the end, and the drain's wait returns.
    stopping[0] = True
    ours.shutdown(_socket.SHUT_RD)
    if not drained.acquire(True, DRAIN_WAIT):
        broken = broken or "the judge could not read the report channel to its end"
    elif not broken and not probed[0]:
        broken = "the report channel no longer leads to the judge"
    elif not broken and others:
        broken = f"something other than bash wrote to it (pid {others[0]})"
    mine = [r for r in reports if r.startswith(token.encode() + b" ")]
    if len(mine) == 1 and os.WIFEXITED(wait_status):
        reported = mine[0][len(token) + 1 :].rstrip(b"\n")
        if reported.isdigit() and len(reported) <= 3:
            return int(reported), True, broken
    return os.waitstatus_to_exitcode(wait_status) % 256 or 1, False, broken


def _spawn(
    bash: str, script_fd: int, report_fd: int, fence: "dict[str, Any]", threads: "tuple[int, ...]"
) -> int:
    """Bash's pid, started fenced: it and every process the check starts can signal neither
    the judge nor bash itself, nor their process group (``kill 0``), nor every process
    (``_fence``), nor, where the kernel has Landlock signal scoping, any process outside bash's
    own domain: the judge's threads (its report drain), whose ids the pid fence cannot name.
    Forked, not ``posix_spawn``: the fence names bash's pid, known only in the
    child. The child says why it could not exec on a close-on-exec pipe (end of file: it did)."""
    judge, group = os.getpid(), os.getpgrp()
    failed_read, failed_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(failed_read)
            fence["install"]((1, judge, *threads, os.getpid()), (group,), False)
            fence["scope_signals"]()  # one thread here: the fork's
            os.dup2(script_fd, SCRIPT_FD)
            os.dup2(report_fd, REPORT_FD)
            os.execve(bash, ["bash", f"/dev/fd/{SCRIPT_FD}"], os.environ)
        except BaseException as exc:
            try:  # noqa: SIM105 - no contextlib in the judge: an import on every check
                os.write(failed_write, repr(exc).encode("utf-8", "replace")[:512])
            except BaseException:
                pass
        finally:
            os._exit(127)
    os.close(failed_write)
    os.close(script_fd)
    why = os.read(failed_read, 1024)
    os.close(failed_read)
    if why:
        os.waitpid(pid, 0)
        raise OSError(f"bash could not be started fenced: {why.decode('utf-8', 'replace')}")
    return pid


def _probe(theirs: "Any", probe: bytes, socket: "Any") -> str:
    """Why bash's end of the report channel is no longer as the judge made it, or "".

    Every process the check starts inherits that end (descriptor 99) and shares its state:
    one that shuts it down, disconnects it, points it elsewhere or makes it non-blocking (to
    lose bash's report on a queue it keeps full) has tampered with the judge's channel."""
    if not os.get_blocking(theirs.fileno()):
        return "it was made non-blocking"
    try:
        theirs.send(probe, socket.MSG_DONTWAIT)
    except OSError as exc:
        return f"the judge cannot write to it ({exc.strerror or exc})"
    return ""


def _sender(ancillary: "list[tuple[int, int, bytes]]", socket: "Any") -> int:
    """The pid the kernel vouches for; descriptors someone passed along are closed."""
    pid = -1
    for level, kind, data in ancillary:
        if level != socket.SOL_SOCKET:
            continue
        if kind == socket.SCM_CREDENTIALS and len(data) >= 12:
            pid = int.from_bytes(data[:4], sys.byteorder, signed=True)
        elif kind == socket.SCM_RIGHTS:
            for at in range(0, len(data) - 3, 4):
                try:  # noqa: SIM105 - no contextlib in the judge: an import on every check
                    os.close(int.from_bytes(data[at : at + 4], sys.byteorder))
                except OSError:
                    pass
    return pid
