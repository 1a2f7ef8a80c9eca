"""``Sandbox.run``: one isolated process tree, its limits, and the facts of how it ended.

The bubblewrap backend gives every run its own PID, network, IPC, UTS and cgroup namespaces, a
read-only system, a fresh read-only /proc and /dev, a private size-capped /tmp and /dev/shm, a cleared
environment, an unprivileged uid, a seccomp filter (``_seccomp``) and a wall-clock kill of the
whole tree (when the sandbox's first process dies, the kernel kills every process in its PID
namespace, daemons included).

Every run (``run`` and ``spawn``, either backend) also gets its own cgroup where one can be made
(``_cgroup``): the memory limit is then the run's whole memory and the process budget its own,
whatever other runs do; the first process is a ``/bin/sh`` that joins the cgroup and sets the
rlimits before it ``exec``s anything of the run. Afterwards every process left is killed and the
cgroup is removed, however the run ended (an exception included). Limits
are named only from what this parent observed (``_reading.observed_limit``).

The judge's runs are, by default, forked from a sandbox template instead of started
(``Sandbox(zygote=...)``, ``_forked``, ``_template``): the same isolation, made by the template's
child instead of bubblewrap and setpriv, at about half the CPU per check.

A run can be started in two steps (``Sandbox.prepare``, then ``Prepared.run`` with its control
message): the judge of a code check waits for that message before doing anything, so its
sandbox can be started before the check's workspace is staged, and on a ``Sandbox(warm=True)``
ahead of time, while other runs run (``_warm``), each started run serving exactly one check.

The ``local`` backend (a subprocess with rlimits and a process-group kill) isolates nothing; it
exists for trusted checks, is refused for untrusted code unless the caller allows it explicitly,
and every result says ``isolation: "none"``.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import resource
import secrets
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

from assay._config import Config
from assay._errors import SandboxUnavailable
from assay._files import readable
from assay.sandbox._cgroup import (
    DEFAULT_PARENT,
    FORKED_OVERHEAD_TASKS,
    SANDBOX_OVERHEAD_TASKS,
    CgroupError,
    Hierarchy,
    RunCgroup,
    hierarchy,
    pid_alive,
)
from assay.sandbox._cgroup import sweep_stale as sweep_stale_cgroups
from assay.sandbox._folders import remove_tree
from assay.sandbox._folders import sweep_stale as sweep_stale_folders
from assay.sandbox._forked import (
    TEMPLATES,
    Forked,
    TemplateDied,
    TemplateHung,
    Templates,
    detached_folder,
)
from assay.sandbox._interpreter import sandbox_interpreter
from assay.sandbox._limits import Limits, reply_cap
from assay.sandbox._prepared import JOIN_FAILED, Prepared
from assay.sandbox._reading import write_all
from assay.sandbox._result import Isolation, RunResult
from assay.sandbox._seccomp import SeccompUnsupported
from assay.sandbox._seccomp import program as seccomp_program
from assay.sandbox._staging import SANDBOX_UID
from assay.sandbox._warm import WarmRuns

RUNNER = Path(__file__).with_name("_runner.py")
JUDGE_TARGET = "/.assay"
RUNNER_TARGET = f"{JUDGE_TARGET}/runner.py"
RUNNER_COMPILED = f"{JUDGE_TARGET}/runner.pyc"
_MIB = 1024 * 1024
_SHM_WITHOUT_CGROUP = 64 * _MIB  # /dev/shm when no cgroup charges it: RAM no limit counts
RESULT_ARG = "{result}"
"""In ``run``'s argv: replaced by the number of the run's end of a private result channel (a
unix stream socket, which unlike a pipe cannot be reopened through ``/proc/PID/fd``); what
arrives on it, at most ``_prepared.CHANNEL_LIMIT + 1`` bytes, is ``RunResult.channel``."""
_CPU_BACKSTOP = 2

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
)
"""Every run sees these; a caller adds what its program needs as read-only ``Mount``s (the proof
languages declare theirs: ``ProofLanguage.sandbox_paths``, e.g. Coq's findlib configuration)."""
_RECHECK = 5.0
"""Seconds for which the system's layout (``_system_args``) is taken as known."""
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


_TEMPLATE_CAPS = (
    "CAP_SYS_ADMIN",  # the run's namespaces and mounts
    "CAP_NET_ADMIN",  # its loopback up
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_SETPCAP",  # its bounding set emptied
    "CAP_SYS_RESOURCE",  # its rlimits, whatever the verifier's own hard limits
)
"""What a sandbox template keeps (as root, in its own namespaces); each run drops all of it."""


@dataclass(frozen=True)
class Mount:
    """A host path shown inside the sandbox at ``target``; read-only unless ``writable``."""

    source: Path
    target: str
    writable: bool = False


Backend = Literal["auto", "bwrap", "local"]


def bwrap_path() -> str | None:
    """Where bubblewrap is on this machine, or None (untrusted kinds then refuse to run)."""
    return shutil.which("bwrap")


class Sandbox:
    """Runs commands isolated; one instance can serve many runs, concurrently.

    ``python``: the interpreter that runs the judge (``Config.sandbox_python``; None: this
    one).

    ``zygote`` (the default, unless ``warm``; ``Config.sandbox_zygote``): the judge's runs
    (``prepare(..., waits=True)`` of ``python_argv``, with bubblewrap as root and a cgroup per
    run) are forked from a sandbox template, a judge started once per shape in which only
    trusted code ever ran, each into fresh namespaces, mounts, /tmp, cgroup, uid, capabilities
    and seccomp filter of its own (``_template`` says exactly what it keeps and what it cannot
    reach; ``_forked`` how the verifier drives it). Every other run is started as without it.
    The template pays the interpreter's and bubblewrap's start-up once, not per run: about half
    the CPU of a python check.

    ``warm``: ``prepare`` starts the next run of the same shape ahead of time, in the
    background, so that its fixed cost (the sandbox, the interpreter, the judge's setup) is paid
    while other runs run (``_warm``). Each run still has a sandbox of its own that no other run
    ever used; between runs a started one waits (at most a few per shape; ``close`` ends them).
    A warm sandbox is meant to live as long as its process (its thread and waiting runs do, until
    ``close`` or exit): make one and share it, as ``configured_sandbox`` does.
    """

    def __init__(
        self,
        backend: Backend = "auto",
        allow_unisolated: bool = False,
        cgroups: bool = True,
        cgroup_parent: str = DEFAULT_PARENT,
        warm: bool = False,
        python: str | None = None,
        zygote: bool | None = None,
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
        self._warm: WarmRuns[Prepared] | None = WarmRuns() if warm else None
        """Runs ``prepare`` started ahead of time, each for one later run of the same shape."""
        if zygote is None:
            zygote = not warm
        self._templates: Templates | None = TEMPLATES if zygote else None
        """Sandbox templates (``_forked``): the judge's runs are forked from one, not started.
        One pool for the process: a template depends only on its shape, never on the sandbox
        object that asked for it."""
        self.python = sandbox_interpreter(python)
        """The interpreter that runs the judge (``python_argv``): the verifier's own unless
        ``python`` names a faster build of the same version (``_interpreter``; InvalidInput
        naming ``sandbox_python`` otherwise)."""

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
        with self.prepare(
            argv, cwd=cwd, mounts=mounts, env=env, limits=limits, untrusted=untrusted
        ) as prepared:
            return prepared.run(control, nonce)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "/",
        mounts: Sequence[Mount] = (),
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        untrusted: bool = True,
        folder_at: str | None = None,
        waits: bool = False,
    ) -> Prepared:
        """A run started and waiting for its control message: ``Prepared.run`` sends it.

        As ``run``, in two steps, with ``folder_at``: a fresh private folder
        (``Prepared.folder``, empty) mounted read-only at that path, which the caller fills
        before ``Prepared.run`` (nothing in the sandbox may look at it before the control
        message arrives). ``waits``: the command does nothing before its control message
        arrives (the judge: ``python_argv``), so on a ``warm`` sandbox the run may have been
        started ahead of time, while other runs ran (``_warm``); it is used for this run alone,
        as one started now would be. Use it as a context manager: closing it kills the run,
        removes its cgroup and its folder, whatever happened.
        """
        limits = limits or Limits()
        if self.isolation == "none" and untrusted and not self.allow_unisolated:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not available and untrusted code never runs unisolated; "
                "install it with ./scripts/setup, or allow unisolated runs explicitly"
            )
        # Copies: a run started later, in the background, must be the one asked for now.
        argv, mounts, env = tuple(argv), tuple(mounts), dict(env or {})
        shape = (argv, cwd, mounts, tuple(env.items()), folder_at)

        def start() -> Prepared:
            return self._start(argv, cwd, mounts, env, limits, folder_at)

        if self._templates is not None and waits and self._forkable(argv):
            try:
                return self._fork(cwd, mounts, env, limits, folder_at)
            except TemplateHung:  # killed: the run is made again, on a new template
                try:
                    return self._fork(cwd, mounts, env, limits, folder_at)
                except TemplateHung as exc:
                    raise SandboxUnavailable(str(exc)) from None
        if self._warm is None or not waits:
            return start()
        return self._warm.take((shape, limits.model_dump_json()), start)

    def close(self) -> None:
        """End the runs started ahead of time (``warm``); later runs may start new ones.
        (Templates are the process's: ``_forked.TEMPLATES.close()`` retires them.)"""
        if self._warm is not None:
            self._warm.close()

    def _forkable(self, argv: Sequence[str]) -> bool:
        """Whether a template can fork this run: the judge, bubblewrap as root (the template
        needs real capabilities to make the run's namespaces), a cgroup per run (its only
        memory and process bound), the judge's compiled folder, and a kernel that makes
        detached mounts (``_detached_mounts``)."""
        return (
            self._bwrap is not None
            and os.geteuid() == 0
            and self.cgroups
            and hierarchy(self.cgroup_parent) is not None
            and _judge_folder() is not None
            and list(argv) == self.python_argv()
            and _detached_mounts()
        )

    def _fork(
        self,
        cwd: str,
        mounts: Sequence[Mount],
        env: Mapping[str, str],
        limits: Limits,
        folder_at: str | None,
    ) -> Prepared:
        """The judge's run, forked from the template of its shape (``_forked``, ``_template``)."""
        assert self._templates is not None
        stack = contextlib.ExitStack()
        try:
            folder = None if folder_at is None else _run_folder(stack)
            cgroup = self._resources(stack, limits, FORKED_OVERHEAD_TASKS)
            assert cgroup is not None  # ``_forkable``: there is a hierarchy
            fds = _Fds(stack)
            control_read, control_write = fds.pipe()
            done_read, done_write = fds.pipe()
            output_read, output_write = fds.pipe()
            status_read, status_write = fds.pipe()
            if folder is not None:
                try:
                    view = fds.adopt(detached_folder(str(folder / "mounted")))
                except OSError as exc:
                    raise SandboxUnavailable(f"cannot mount the run's folder: {exc}") from None
            else:
                view = fds.opened(Path("/dev/null"), os.O_PATH | os.O_CLOEXEC)
            passed = [status_write, output_write, control_read, done_write, view]
            passed += [fds.opened(path, os.O_WRONLY | os.O_CLOEXEC) for path in cgroup.join_files()]
            try:
                seccomp = seccomp_program()
            except SeccompUnsupported as exc:  # never run untrusted code unfiltered
                raise SandboxUnavailable(str(exc)) from None
            cpu = limits.cpu + (_CPU_BACKSTOP if cgroup.accounts_cpu else 0)
            request = {
                "tasks": len(passed) - 5,
                "rlimits": [
                    (resource.RLIMIT_CPU, cpu, cpu + 1),
                    (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
                    (resource.RLIMIT_CORE, 0, 0),
                ],
                "env": {**_BASE_ENV, **env},
                "cwd": cwd,
                "folder_at": folder_at,
                "tmp_bytes": (limits.memory_mb + 1) * _MIB,
                "seccomp": seccomp,
            }
            key = (self._bwrap, self.python.path, _judge_folder(), tuple(mounts), folder_at)
            try:
                self._templates.fork(
                    key, lambda: self._template_argv(mounts, folder_at), request, passed
                )
            except TemplateHung:
                raise  # ``prepare`` makes the run again (this one's stack closes below)
            except TemplateDied as exc:
                raise SandboxUnavailable(str(exc)) from None
            for fd in passed:
                fds.close(fd)
            process = Forked(fds.take(output_read), fds.take(status_read))
            prepared = Prepared(self.isolation, stack, process, cgroup, limits, folder)
            stack.callback(prepared.kill)
            prepared.control = fds.take(control_write)
            prepared.done = fds.take(done_read)
            stack.callback(prepared.close_fds)
            return prepared
        except BaseException:
            stack.close()
            raise

    def _template_argv(self, mounts: Sequence[Mount], folder_at: str | None) -> list[str]:
        """bubblewrap starting a template (``_template``): the judge's system view and mounts,
        its own PID, network, IPC and UTS namespaces, root with only the capabilities that
        making a run's sandbox needs, no seccomp filter (each run loads it)."""
        assert self._bwrap is not None
        epoch = int(time.monotonic() // _RECHECK)
        system, system_made = _system_args(self._bwrap, True, self.python.prefixes, epoch)
        args = [a for a in system if a != "--unshare-cgroup-try"]  # runs join cgroups outside
        made = set(system_made)
        for key, value in _BASE_ENV.items():
            args += ["--setenv", key, value]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # each run mounts its own
        judge = _judge_folder()
        assert judge is not None  # ``_forkable``
        args += ["--ro-bind", str(judge), JUDGE_TARGET]
        made.add(JUDGE_TARGET)
        for mount in mounts:
            args += _parents(mount.target, made)
            args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
            made.add(mount.target)
        if folder_at is not None:
            args += [*_parents(folder_at, made), "--perms", "0755", "--dir", folder_at]
        args += ["--chdir", "/", "--cap-drop", "ALL"]
        for cap in _TEMPLATE_CAPS:
            args += ["--cap-add", cap]
        runner = [self.python.path, "-I", "-S", RUNNER_COMPILED, "template", "{socket}"]
        return [*args, "--", *runner, *python_paths()]

    def _start(
        self,
        argv: Sequence[str],
        cwd: str,
        mounts: Sequence[Mount],
        env: Mapping[str, str] | None,
        limits: Limits,
        folder_at: str | None,
    ) -> Prepared:
        stack = contextlib.ExitStack()
        try:
            folder = None
            if folder_at is not None:
                folder = _run_folder(stack)
                mounts = [*mounts, Mount(folder / "mounted", folder_at)]
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
            prepared = Prepared(self.isolation, stack, process, cgroup, limits, folder)
            stack.callback(_reap_quietly, process)
            stack.callback(prepared.kill)
            for fd in (control_read, done_write, *passed):
                fds.close(fd)
            prepared.control = fds.take(control_write)
            prepared.done = fds.take(done_read)
            prepared.channel = fds.take(channel[0]) if channel is not None else None
            stack.callback(prepared.close_fds)
            return prepared
        except BaseException:
            stack.close()
            raise

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

    def _resources(
        self,
        stack: contextlib.ExitStack,
        limits: Limits,
        overhead: int = SANDBOX_OVERHEAD_TASKS,
    ) -> RunCgroup | None:
        """The run's cgroup, if one can be made; closed (emptied, removed) by ``stack``;
        ``overhead``: the sandbox's own tasks in it, beside the ``processes`` budget."""
        where = hierarchy(self.cgroup_parent) if self.cgroups else None
        _sweep_once(where)
        _sweep_folders_once()
        if where is None:
            return None
        try:
            memory, tasks = limits.memory_mb * _MIB, limits.processes
            return stack.enter_context(RunCgroup(where, memory, tasks, overhead))
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
        if self._bwrap is None:
            runner = str(RUNNER)
        else:
            runner = RUNNER_COMPILED if _judge_folder() is not None else RUNNER_TARGET
        return [self.python.path, "-I", "-S", runner, "{control}", "{done}"]

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
        epoch = int(time.monotonic() // _RECHECK)
        system, system_made = _system_args(self._bwrap, root, self.python.prefixes, epoch)
        args, made = list(system), set(system_made)
        for key, value in env.items():
            args += ["--setenv", key, value]
        # /proc read-only: /proc/PID/mem of another process cannot be opened for writing.
        args += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev"]
        # With a cgroup, /tmp's pages are the run's memory: the tmpfs is made larger than the
        # memory limit, so filling it is an OOM kill the parent reads from the cgroup, not an
        # ENOSPC only the run sees. Without one, ``scratch_mb`` caps it.
        size = (limits.memory_mb + 1) * _MIB if cgroup is not None else limits.scratch_mb * _MIB
        args += ["--size", str(size), "--perms", "1777", "--tmpfs", "/tmp"]
        # /dev/shm likewise (POSIX semaphores and shared memory: multiprocessing's locks and
        # queues, process pools), charged to the run like /tmp; without a cgroup, smaller.
        shm = size if cgroup is not None else min(size, _SHM_WITHOUT_CGROUP)
        args += ["--size", str(shm), "--perms", "1777", "--tmpfs", "/dev/shm"]
        judge = _judge_folder()
        if judge is not None:  # the runner compiled and its helpers, in one mount
            args += ["--ro-bind", str(judge), JUDGE_TARGET]
            made.add(JUDGE_TARGET)
        else:
            args += [*_parents(RUNNER_TARGET, made), "--ro-bind", str(RUNNER), RUNNER_TARGET]
        for mount in mounts:
            args += _parents(mount.target, made)
            args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
            made.add(mount.target)
        if not root:
            # In a user namespace the root tmpfs and the folders bwrap made on it (/etc...) are
            # the sandbox user's own: without this, the checked code could create
            # /etc/ld.so.preload and run its code in every later process of the check. As root
            # they are root's, which the sandbox uid cannot write. /tmp is a mount of its own.
            args += ["--remount-ro", "/"]
        args += ["--chdir", cwd, "--seccomp", str(seccomp_fd)]
        if root:
            # Real root is not held to RLIMIT_NPROC: become an unprivileged uid for the checked code.
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
            args += [_setpriv(), f"--reuid={SANDBOX_UID}"]
            args += [
                f"--regid={SANDBOX_UID}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
            ]
        else:
            args += ["--"]
        return args + list(argv)


def configured_sandbox(config: Config) -> Sandbox:
    """The sandbox ``config`` describes (``allow_unisolated``, ``cgroup_parent``,
    ``sandbox_python``, ``sandbox_zygote``), one per setting: every caller that has a Config
    gets its sandbox here."""
    return _configured(
        config.allow_unisolated, config.cgroup_parent, config.sandbox_python, config.sandbox_zygote
    )


@lru_cache(maxsize=4)
def _configured(
    allow_unisolated: bool, cgroup_parent: str, python: str | None, zygote: bool
) -> Sandbox:
    return Sandbox(
        allow_unisolated=allow_unisolated, cgroup_parent=cgroup_parent, python=python, zygote=zygote
    )


@lru_cache(maxsize=1)
def python_paths() -> tuple[str, ...]:
    """This environment's site-packages, which the runner (started with -S) adds to sys.path."""
    import sysconfig

    paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    return tuple(dict.fromkeys(p for p in paths if p))


def runner_control(
    mode: Literal["python", "shell"],
    code: str,
    filename: str,
    cwd: str,
    path: Sequence[str] = (),
    memory_mb: int | None = None,
) -> tuple[bytes, str]:
    """The runner's control message and the run's nonce, for ``Sandbox.run(control=, nonce=)``.

    ``memory_mb``: the run's memory (default: ``Limits``'), from which the judge's cap on what
    may cross back from the candidate's process is derived (``reply_cap``).

    marshal, not json: the runner starts in a few milliseconds only if it imports nothing.
    Its length comes first: the runner reads that much, never waiting for the pipe's end of
    file, which a process forked from the verifier (holding a copy of the write end) delays.
    """
    nonce = secrets.token_hex(16)
    message = {
        "mode": mode,
        "code": code,
        "nonce": nonce,
        "filename": filename,
        "cwd": cwd,
        "path": [*path, *python_paths()],
        "max_reply": reply_cap(Limits().memory_mb if memory_mb is None else memory_mb),
    }
    data = marshal.dumps(message)
    return len(data).to_bytes(8, "big") + data, nonce


def _run_folder(stack: contextlib.ExitStack) -> Path:
    """A fresh staging folder for one run (removed with ``stack``); the run sees its
    ``mounted`` subfolder, readable whatever the umask."""
    folder = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-"))
    stack.callback(remove_tree, folder)
    (folder / "mounted").mkdir()
    os.chmod(folder / "mounted", 0o755)
    return folder


@lru_cache(maxsize=4)
def _system_args(
    bwrap: str, root: bool, interpreter: tuple[str, ...], _epoch: int
) -> tuple[tuple[str, ...], frozenset[str]]:
    """bwrap's first arguments, the same for every run: namespaces, /usr and its links, /etc,
    this Python's prefixes and those of the ``interpreter`` that runs the judge (looked up
    again every ``_RECHECK`` seconds: ``_epoch``), and the folders they made. Computing them
    cost each run about a millisecond (links, ``realpath``)."""
    args = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if not root:
        args += ["--unshare-user"]
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
    for prefix in dict.fromkeys((*_python_prefixes(), *interpreter)):
        args += [*_parents(prefix, made), "--ro-bind", prefix, prefix]
    return tuple(args), frozenset(made)


@lru_cache(maxsize=1)
def _detached_mounts() -> bool:
    """Whether this kernel makes detached read-only mounts (``open_tree``, ``mount_setattr``:
    Linux 5.12), which a forked run's folder is attached from; without them, runs start with
    bubblewrap as before (checked once per process)."""
    try:
        os.close(detached_folder(tempfile.gettempdir()))
    except OSError:
        return False
    return True


@lru_cache(maxsize=1)
def _setpriv() -> str:
    """setpriv's path, looked up once (``shutil.which`` on every run cost about 0.3 ms)."""
    return shutil.which("setpriv") or "/usr/bin/setpriv"


def _judge_folder() -> Path | None:
    """The judge's files, compiled, in one folder (``_judge_files.judge_folder``), or None."""
    from assay.sandbox._judge_files import judge_folder  # it imports this module (``Mount``)

    return judge_folder()


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
    return f'{join}{" && ".join(settings)} || exit {JOIN_FAILED}; exec "$@"'


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

    def adopt(self, fd: int) -> int:
        """Close ``fd`` with the others."""
        self._open.add(fd)
        return fd

    def opened(self, path: Path, flags: int) -> int:
        """``os.open(path, flags)``, closed with the others."""
        fd = os.open(path, flags)
        self._open.add(fd)
        return fd

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
        readable(pidfd, None)
    finally:
        os.close(pidfd)
    stack.close()
