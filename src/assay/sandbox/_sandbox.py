"""``Sandbox.run``: one isolated process tree, its limits, and the facts of how it ended.

The bubblewrap backend gives every run its own PID, network, IPC, UTS and cgroup namespaces, a
read-only system, a fresh read-only /proc and /dev, a private size-capped /tmp, a cleared
environment, an unprivileged uid, a seccomp filter (``_seccomp``) and a wall-clock kill of the
whole tree (when the sandbox's first process dies, the kernel kills every process in its PID
namespace, daemons included).

Every run (``run`` and ``spawn``, either backend) also gets its own cgroup where one can be made
(``_cgroup``): the memory limit is then the run's whole memory and the process budget its own,
whatever other runs do; the first process is a ``/bin/sh`` that joins the cgroup and sets the
rlimits before it ``exec``s anything of the run. Afterwards every process left is killed and the
cgroup is removed, however the run ended (an exception included). Limits
are named only from what this parent observed (``_reading.observed_limit``).

The ``local`` backend (a subprocess with rlimits and a process-group kill) isolates nothing; it
exists for trusted checks, is refused for untrusted code unless the caller allows it explicitly,
and every result says ``isolation: "none"``.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from assay._errors import SandboxUnavailable
from assay.sandbox._cgroup import (
    DEFAULT_PARENT,
    CgroupError,
    Hierarchy,
    RunCgroup,
    hierarchy,
    pid_alive,
)
from assay.sandbox._cgroup import sweep_stale as sweep_stale_cgroups
from assay.sandbox._folders import sweep_stale as sweep_stale_folders
from assay.sandbox._limits import Limits
from assay.sandbox._reading import (
    collect,
    events_of,
    kill_tree,
    observed_limit,
    read_channel,
    read_done,
    write_all,
)
from assay.sandbox._result import Isolation, RunResult
from assay.sandbox._seccomp import SeccompUnsupported
from assay.sandbox._seccomp import program as seccomp_program
from assay.sandbox._staging import SANDBOX_UID

RUNNER = Path(__file__).with_name("_runner.py")
RUNNER_TARGET = "/.assay/runner.py"
_MIB = 1024 * 1024
RESULT_ARG = "{result}"
"""In ``run``'s argv: replaced by the number of the run's end of a private result channel (a
unix stream socket, which unlike a pipe cannot be reopened through ``/proc/PID/fd``); what
arrives on it, at most ``CHANNEL_LIMIT + 1`` bytes, is ``RunResult.channel``."""
CHANNEL_LIMIT = 64 * 1024
_CPU_BACKSTOP = 2
_JOIN_FAILED = 125
"""Exit status of the joining shell when it could not enter the run's cgroup."""

_SYSTEM_DIRS = ("/usr",)
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/ocamlfind.conf",  # coqc (OCaml) refuses to start without it
    "/etc/ocamlfind.conf.d",
)
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    # HOME (/tmp) is writable: without this, code a submission plants in the user site-packages
    # (usercustomize.py) runs first in every later Python of the same run, the author's own too.
    "PYTHONNOUSERSITE": "1",
}


@dataclass(frozen=True)
class Mount:
    """A host path shown inside the sandbox at ``target``; read-only unless ``writable``."""

    source: Path
    target: str
    writable: bool = False


Backend = Literal["auto", "bwrap", "local"]


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


class Sandbox:
    """Runs commands isolated; one instance can serve many runs (it holds no per-run state)."""

    def __init__(
        self,
        backend: Backend = "auto",
        allow_unisolated: bool = False,
        cgroups: bool = True,
        cgroup_parent: str = DEFAULT_PARENT,
    ) -> None:
        self._bwrap = bwrap_path() if backend in ("auto", "bwrap") else None
        if backend == "bwrap" and self._bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run ./scripts/setup")
        self.allow_unisolated = allow_unisolated
        self.isolation: Isolation = "bwrap" if self._bwrap else "none"
        self.cgroups = cgroups
        """Put each run in its own cgroup when one can be made (False: rlimits only)."""
        self.cgroup_parent = cgroup_parent
        """The cgroup that holds the run cgroups ("self": the verifier's own)."""

    @property
    def memory_limit(self) -> str:
        """What will bind a run's memory: "cgroup-v1", "cgroup-v2" or "rlimit-as"."""
        where = hierarchy(self.cgroup_parent) if self.cgroups else None
        return where.version if where is not None else "rlimit-as"

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "/",
        mounts: Sequence[Mount] = (),
        env: Mapping[str, str] | None = None,
        control: bytes | None = None,
        nonce: str | None = None,
        limits: Limits | None = None,
        untrusted: bool = True,
    ) -> RunResult:
        """Run ``argv`` and return how it ended; raises only when it cannot run at all.

        ``control`` is written to a pipe whose read end number replaces ``{control}`` in
        ``argv``; the write end of a second pipe replaces ``{done}``. Lines arriving on it that
        start with ``nonce`` decide ``started`` and ``completed`` (see the runner and
        ``runner_control``). An argument holding ``RESULT_ARG`` gets a private result channel
        (see there). Untrusted code on the local backend raises SandboxUnavailable
        unless ``allow_unisolated`` was given. Whatever happens, every process of the run is
        killed and its cgroup is removed before this returns or raises.
        """
        limits = limits or Limits()
        if self.isolation == "none" and untrusted and not self.allow_unisolated:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not available and untrusted code never runs unisolated; "
                "install it with ./scripts/setup, or allow unisolated runs explicitly"
            )
        with contextlib.ExitStack() as stack:
            cgroup = self._resources(stack, limits)
            fds = _Fds(stack)
            control_read, control_write = fds.pipe()
            done_read, done_write = fds.pipe()
            channel: tuple[int, int] | None = None
            if any(RESULT_ARG in a for a in argv):
                channel = fds.socketpair()
            argv = [
                a.replace("{control}", str(control_read))
                .replace("{done}", str(done_write))
                .replace(RESULT_ARG, str(channel[1] if channel else -1))
                for a in argv
            ]
            command, popen_env, popen_cwd, passed = self._command(
                argv, cwd, mounts, env, limits, cgroup, fds
            )
            if channel is not None:
                passed = (*passed, channel[1])
            start = time.monotonic()
            try:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    pass_fds=(control_read, done_write, *passed),
                    env=popen_env,
                    cwd=popen_cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise SandboxUnavailable(f"cannot start {command[0]}: {exc.strerror}") from None

            def kill() -> None:
                kill_tree(process)
                if cgroup is not None:
                    cgroup.kill(wait=False)  # its close waits for the last of them

            stack.callback(_reap_quietly, process)
            stack.callback(kill)
            for fd in (control_read, done_write, *passed):
                fds.close(fd)
            writer = threading.Thread(
                target=write_all, args=(fds.take(control_write), control or b""), daemon=True
            )
            writer.start()
            received = bytearray()
            reader = None
            if channel is not None:
                reader = threading.Thread(
                    target=read_channel,
                    args=(fds.take(channel[0]), CHANNEL_LIMIT, received),
                    daemon=True,
                )
                reader.start()
            cpu_usage = cgroup.cpu_usage if cgroup is not None and cgroup.accounts_cpu else None
            seen = collect(process, limits, start, kill, cpu_usage)
            done = read_done(fds.take(done_read))
            writer.join(timeout=1)
            kill()  # what the run left behind (daemons outside the PID namespace, locally)
            if reader is not None:
                reader.join(timeout=5)  # every holder of the other end is dead: it ends now
            elapsed = time.monotonic() - start
            returncode = process.returncode
            exit_code = returncode if returncode is not None and returncode >= 0 else None
            sig = -returncode if returncode is not None and returncode < 0 else None
            counters = cgroup.counters() if cgroup is not None else None
            if exit_code == _JOIN_FAILED and cgroup is not None and not cgroup.joined():
                raise SandboxUnavailable("the run could not join its cgroup")
            cpu = counters.cpu_seconds if counters is not None else seen.cpu_seconds
            limit = observed_limit(
                ended_by_parent=seen.limit,
                failed=exit_code != 0,
                counters=counters,
                cpu_seconds=cpu,
                limits=limits,
                cpu_enforced=cpu_usage is not None,
            )
            events = events_of(done, nonce)
            return RunResult(
                exit_code=exit_code,
                signal=sig,
                output=seen.output.decode("utf-8", errors="replace"),
                output_bytes=seen.total,
                truncated=seen.truncated,
                elapsed=elapsed,
                isolation=self.isolation,
                limit=limit,
                memory_limit=cgroup.version if cgroup is not None else "rlimit-as",
                cpu_seconds=round(cpu, 3),
                started=["started"] in events,
                completed=["completed"] in events,
                tampered=["tampered"] in events,
                runner_failed=["runner_error"] in events,
                check_failed=["failed"] in events,
                channel=(bytes(received) if reader is not None and not reader.is_alive() else None),
            )
        raise AssertionError("unreachable")  # pragma: no cover  (the with block returns)

    def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "/",
        mounts: Sequence[Mount] = (),
        limits: Limits | None = None,
    ) -> subprocess.Popen[bytes]:
        """A long-lived isolated process with stdin/stdout pipes (for interactive lanes).

        Same isolation and limits as ``run`` (its own cgroup included) except the wall clock,
        which the caller owns: it must end the process with ``kill_tree`` when done. The cgroup
        is removed by a watcher thread once the process has exited.
        """
        if self._bwrap is None and not self.allow_unisolated:
            raise SandboxUnavailable("bubblewrap (bwrap) is not available for an isolated process")
        limits = limits or Limits()
        stack = contextlib.ExitStack()
        try:
            cgroup = self._resources(stack, limits)
            fds = _Fds(stack)
            command, env, popen_cwd, passed = self._command(
                argv, cwd, mounts, None, limits, cgroup, fds
            )
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=passed,
                env=env,
                cwd=popen_cwd,
                start_new_session=True,
            )
            for fd in passed:
                fds.close(fd)
        except BaseException:
            stack.close()
            raise
        threading.Thread(target=_clean_after, args=(process, stack), daemon=True).start()
        return process

    def _resources(self, stack: contextlib.ExitStack, limits: Limits) -> RunCgroup | None:
        """The run's cgroup, if one can be made; closed (emptied, removed) by ``stack``."""
        where = hierarchy(self.cgroup_parent) if self.cgroups else None
        _sweep_once(where)
        _sweep_folders_once()
        if where is None:
            return None
        try:
            return stack.enter_context(RunCgroup(where, limits.memory_mb * _MIB, limits.processes))
        except CgroupError as exc:
            raise SandboxUnavailable(str(exc)) from None

    def _command(
        self,
        argv: Sequence[str],
        cwd: str,
        mounts: Sequence[Mount],
        env: Mapping[str, str] | None,
        limits: Limits,
        cgroup: RunCgroup | None,
        fds: _Fds,
    ) -> tuple[list[str], dict[str, str], str, tuple[int, ...]]:
        """(command, environment, working directory, descriptors to pass) for Popen.

        The command is a ``/bin/sh`` that joins the run's cgroup, sets the rlimits and then
        ``exec``s the sandbox: nothing of the run exists outside its cgroup, and no fork of this
        (large) process with a ``preexec_fn`` is needed.
        """
        full_env = {**_BASE_ENV, **(env or {})}
        wrapper = ["/bin/sh", "-c", _prelude(limits, cgroup), "sh"]
        if self._bwrap:
            try:
                rules = seccomp_program()
            except SeccompUnsupported as exc:  # never run untrusted code unfiltered
                raise SandboxUnavailable(str(exc)) from None
            read_end, write_end = fds.pipe()
            write_all(fds.take(write_end), rules)
            inner = self._bwrap_argv(argv, cwd, mounts, full_env, limits, cgroup, read_end)
            # bwrap starts from an empty environment and sets the sandbox's own with --setenv.
            return [*wrapper, *inner], {}, "/", (read_end,)
        return [*wrapper, *argv], full_env, _local_cwd(cwd, mounts), ()

    def python_argv(self) -> list[str]:
        """The argv that starts the runner with this interpreter (no site, isolated mode)."""
        runner = RUNNER_TARGET if self._bwrap else str(RUNNER)
        return [os.path.realpath(sys.executable), "-I", "-S", runner, "{control}", "{done}"]

    def inside_path(self, target: str, mounts: Sequence[Mount]) -> str:
        """Where code run by this sandbox finds ``target``: itself with bwrap, the source without."""
        return target if self._bwrap else _local_cwd(target, mounts)

    def _bwrap_argv(
        self,
        argv: Sequence[str],
        cwd: str,
        mounts: Sequence[Mount],
        env: Mapping[str, str],
        limits: Limits,
        cgroup: RunCgroup | None,
        seccomp_fd: int,
    ) -> list[str]:
        assert self._bwrap is not None
        root = os.geteuid() == 0
        args = [self._bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
        if not root:
            args += ["--unshare-user"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        for path in _SYSTEM_DIRS:
            args += ["--ro-bind", path, path]
        for path in _SYSTEM_LINKS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it 0700: unreadable
        for path in _ETC_FILES:
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        made: set[str] = {"/", "/usr", "/tmp", "/proc", "/dev", "/etc"}
        for prefix in _python_prefixes():
            args += [*_parents(prefix, made), "--ro-bind", prefix, prefix]
        # /proc read-only: /proc/PID/mem of another process cannot be opened for writing.
        args += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev"]
        # With a cgroup, /tmp's pages are the run's memory: the tmpfs is made larger than the
        # memory limit, so filling it is an OOM kill the parent reads from the cgroup, not an
        # ENOSPC only the run sees. Without one, ``scratch_mb`` caps it.
        size = (limits.memory_mb + 1) * _MIB if cgroup is not None else limits.scratch_mb * _MIB
        args += ["--size", str(size), "--perms", "1777", "--tmpfs", "/tmp"]
        args += [*_parents(RUNNER_TARGET, made), "--ro-bind", str(RUNNER), RUNNER_TARGET]
        for mount in mounts:
            args += _parents(mount.target, made)
            args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
            made.add(mount.target)
        args += ["--chdir", cwd, "--seccomp", str(seccomp_fd)]
        if root:
            # Real root is not held to RLIMIT_NPROC: become an unprivileged uid for the checked code.
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
            args += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={SANDBOX_UID}"]
            args += [
                f"--regid={SANDBOX_UID}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
            ]
        else:
            args += ["--"]
        return args + list(argv)


@lru_cache(maxsize=1)
def python_paths() -> tuple[str, ...]:
    """This environment's site-packages, which the runner (started with -S) adds to sys.path."""
    import sysconfig

    paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    return tuple(dict.fromkeys(p for p in paths if p))


def runner_control(
    mode: Literal["python", "shell"], code: str, filename: str, cwd: str, path: Sequence[str] = ()
) -> tuple[bytes, str]:
    """The runner's control message and the run's nonce, for ``Sandbox.run(control=, nonce=)``.

    marshal, not json: the runner starts in a few milliseconds only if it imports nothing.
    """
    nonce = secrets.token_hex(16)
    message = {
        "mode": mode,
        "code": code,
        "nonce": nonce,
        "filename": filename,
        "cwd": cwd,
        "path": [*path, *python_paths()],
    }
    return marshal.dumps(message), nonce


def _python_prefixes() -> list[str]:
    prefixes = [os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)]
    return [p for p in dict.fromkeys(prefixes) if not p.startswith("/usr/") and p != "/usr"]


def _parents(target: str, made: set[str]) -> list[str]:
    """``--dir`` for each missing ancestor, world-traversable (bwrap would make them 0700)."""
    args: list[str] = []
    parts = Path(target).parts
    for i in range(2, len(parts)):
        folder = str(Path(*parts[:i]))
        if folder not in made:
            args += ["--perms", "0755", "--dir", folder]
            made.add(folder)
    return args


def _local_cwd(cwd: str, mounts: Sequence[Mount]) -> str:
    for mount in mounts:
        if cwd == mount.target or cwd.startswith(mount.target.rstrip("/") + "/"):
            return str(mount.source) + cwd[len(mount.target) :]
    return cwd


def _prelude(limits: Limits, cgroup: RunCgroup | None) -> str:
    """The joining shell's script: enter the cgroup, set rlimits, ``exec "$@"``.

    With a cgroup, memory and tasks are bound by it, so RLIMIT_AS (which Agda's GHC runtime
    and coqc trip over: they reserve far more address space than they use; and it counts
    neither memfds nor tmpfs pages), RLIMIT_NPROC (per uid: concurrent sandboxes would share it)
    and RLIMIT_FSIZE (every file the run can write is on a tmpfs charged to the cgroup) are not
    set: each would only turn a limit into a failure the parent cannot tell from a fake one.
    Without a cgroup they are the only bounds there are. RLIMIT_CPU is per process: with a
    cgroup that accounts CPU time, the parent enforces ``cpu_seconds`` on the whole run, and
    RLIMIT_CPU is only a backstop ``_CPU_BACKSTOP`` seconds above it (for a parent that could
    not read the counter); without one it is the CPU limit, per process.
    """
    cpu = limits.cpu
    if cgroup is not None and cgroup.accounts_cpu:
        cpu += _CPU_BACKSTOP  # the parent enforces the whole run's limit; this is a backstop
    settings = [
        f"ulimit -S -t {cpu}",
        f"ulimit -H -t {cpu + 1}",
        f"ulimit -n {limits.open_files}",
        "ulimit -c 0",
    ]
    if cgroup is None:
        settings.append(f"ulimit -f {limits.file_mb * 2048}")  # 512-byte blocks
        settings.append(f"ulimit -v {limits.memory_mb * 1024}")
        tasks = limits.processes
        if os.geteuid() != 0:  # the count is per real uid: leave room for what this user runs
            tasks += _processes_of(os.getuid())
        settings.append(f"ulimit -p {tasks}")  # enforced once setpriv drops to the sandbox uid
    join = f"{cgroup.join_script()}; " if cgroup is not None else ""
    return f'{join}{" && ".join(settings)} || exit {_JOIN_FAILED}; exec "$@"'


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


class _Fds:
    """Descriptors of one run, closed when its stack closes unless handed on (``take``)."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._open: set[int] = set()
        stack.callback(self._close_all)

    def pipe(self) -> tuple[int, int]:
        read_end, write_end = os.pipe()
        self._open.update((read_end, write_end))
        return read_end, write_end

    def socketpair(self) -> tuple[int, int]:
        """A connected pair of unix stream sockets (the parent's end, the run's end)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pair = ours.detach(), theirs.detach()
        self._open.update(pair)
        return pair

    def take(self, fd: int) -> int:
        self._open.discard(fd)
        return fd

    def close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def _close_all(self) -> None:
        for fd in list(self._open):
            self.close(fd)


@lru_cache(maxsize=4)
def _sweep_once(where: Hierarchy | None) -> None:
    """Remove the cgroups that runs of killed verifier processes left behind."""
    if where is not None:
        sweep_stale_cgroups(where)


STAGING_PREFIX = "assay-run-"
"""Staging folders of code checks, ``assay-run-{pid}-...`` in the temporary folder (``mkdtemp``;
checker scratch folders are swept by ``_protocol``)."""


@lru_cache(maxsize=1)
def _sweep_folders_once() -> int:
    """Remove the staging folders of verifier processes killed mid-run: only this uid's own
    0700 folders, never through a link (``_folders.sweep_stale``)."""
    return sweep_stale_folders(Path(tempfile.gettempdir()), STAGING_PREFIX, pid_alive)


def _reap_quietly(process: subprocess.Popen[bytes]) -> None:
    """Wait for a killed run's first process (bounded), whatever went wrong before."""
    with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
        process.wait(timeout=10)


def _clean_after(process: subprocess.Popen[bytes], stack: contextlib.ExitStack) -> None:
    """For ``spawn``: once the process has exited, kill what is left and remove its cgroup."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except OSError:
        stack.close()
        return
    try:
        select.select([pidfd], [], [])
    finally:
        os.close(pidfd)
    stack.close()
