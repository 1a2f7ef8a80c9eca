"""``Sandbox.run``: one isolated process tree, its limits, and the facts of how it ended.

The bubblewrap backend gives every run its own PID, network, IPC and UTS namespaces, a read-only
system, a fresh /proc and /dev, a private size-capped /tmp, a cleared environment, an
unprivileged uid (so RLIMIT_NPROC holds: it is not enforced for root) and a wall-clock kill of
the whole tree (when the sandbox's first process dies, the kernel kills every process in its PID
namespace, daemons included). The ``local`` backend (a subprocess with rlimits and a process-group
kill) isolates nothing; it exists for trusted checks, is refused for untrusted code unless the
caller allows it explicitly, and every result says ``isolation: "none"``.
"""

from __future__ import annotations

import marshal
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from assay._errors import SandboxUnavailable
from assay.sandbox._limits import Limits
from assay.sandbox._reading import collect, events_of, limit_from, read_done, write_all
from assay.sandbox._result import Isolation, RunResult
from assay.sandbox._staging import SANDBOX_UID

RUNNER = Path(__file__).with_name("_runner.py")
RUNNER_TARGET = "/.assay/runner.py"
PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"

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

    def __init__(self, backend: Backend = "auto", allow_unisolated: bool = False) -> None:
        self._bwrap = bwrap_path() if backend in ("auto", "bwrap") else None
        if backend == "bwrap" and self._bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run ./scripts/setup")
        self.allow_unisolated = allow_unisolated
        self.isolation: Isolation = "bwrap" if self._bwrap else "none"

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
        start with ``nonce`` decide ``started``, ``completed`` and reported limits (see the
        runner and ``runner_control``). Untrusted code on the local backend raises
        SandboxUnavailable unless ``allow_unisolated`` was given.
        """
        limits = limits or Limits()
        if self.isolation == "none" and untrusted and not self.allow_unisolated:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not available and untrusted code never runs unisolated; "
                "install it with ./scripts/setup, or allow unisolated runs explicitly"
            )
        control_read, control_write = os.pipe()
        done_read, done_write = os.pipe()
        argv = [
            a.replace("{control}", str(control_read)).replace("{done}", str(done_write))
            for a in argv
        ]
        command, popen_env, popen_cwd = self._command(argv, cwd, mounts, env, limits)
        start = time.monotonic()
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(control_read, done_write),
                env=popen_env,
                cwd=popen_cwd,
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (control_read, control_write, done_read, done_write):
                os.close(fd)
            raise SandboxUnavailable(f"cannot start {command[0]}: {exc.strerror}") from None
        os.close(control_read)
        os.close(done_write)
        writer = threading.Thread(
            target=write_all, args=(control_write, control or b""), daemon=True
        )
        writer.start()
        output, total, truncated, limit = collect(process, limits, start)
        done = read_done(done_read)
        writer.join(timeout=1)
        returncode = process.returncode
        elapsed = time.monotonic() - start
        exit_code = returncode if returncode is not None and returncode >= 0 else None
        sig = -returncode if returncode is not None and returncode < 0 else None
        events = events_of(done, nonce)
        if limit is None:
            limit = limit_from(sig, events, output, exit_code)
        return RunResult(
            exit_code=exit_code,
            signal=sig,
            output=output.decode("utf-8", errors="replace"),
            output_bytes=total,
            truncated=truncated,
            elapsed=elapsed,
            isolation=self.isolation,
            limit=limit,
            started=["started"] in events,
            completed=["completed"] in events,
            tampered=["tampered"] in events,
            runner_failed=["runner_error"] in events,
        )

    def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: str = "/",
        mounts: Sequence[Mount] = (),
        limits: Limits | None = None,
    ) -> subprocess.Popen[bytes]:
        """A long-lived isolated process with stdin/stdout pipes (for interactive lanes).

        Same isolation and limits as ``run`` except the wall clock, which the caller owns: it
        must end the process with ``kill_tree`` when done.
        """
        if self._bwrap is None and not self.allow_unisolated:
            raise SandboxUnavailable("bubblewrap (bwrap) is not available for an isolated process")
        command, env, popen_cwd = self._command(argv, cwd, mounts, None, limits or Limits())
        return subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=popen_cwd,
            start_new_session=True,
        )

    def _command(
        self,
        argv: Sequence[str],
        cwd: str,
        mounts: Sequence[Mount],
        env: Mapping[str, str] | None,
        limits: Limits,
    ) -> tuple[list[str], dict[str, str], str]:
        """(command, environment, working directory) for Popen, with limits and isolation."""
        full_env = {**_BASE_ENV, **(env or {})}
        if self._bwrap:
            # bwrap starts from an empty environment and sets the sandbox's own with --setenv.
            return (
                self._bwrap_argv([*_prlimit(limits), *argv], cwd, mounts, full_env, limits),
                {},
                "/",
            )
        return [*_prlimit(limits), *argv], full_env, _local_cwd(cwd, mounts)

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
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += [
            "--size",
            str(limits.scratch_mb * 1024 * 1024),
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
        ]
        args += [*_parents(RUNNER_TARGET, made), "--ro-bind", str(RUNNER), RUNNER_TARGET]
        for mount in mounts:
            args += _parents(mount.target, made)
            args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
            made.add(mount.target)
        args += ["--chdir", cwd]
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


def _prlimit(limits: Limits) -> list[str]:
    """``prlimit`` with every limit, prefixed to the command: rlimits set without a preexec_fn,
    which would force a slow fork of this (large) process on every run."""
    megabyte = 1024 * 1024
    args = [
        PRLIMIT,
        f"--cpu={limits.cpu}:{limits.cpu + 1}",
        f"--as={limits.memory_mb * megabyte}",
        f"--fsize={limits.file_mb * megabyte}",
        f"--nofile={limits.open_files}",
        "--core=0",
    ]
    if os.geteuid() == 0:
        args.append(f"--nproc={limits.processes}")  # enforced once setpriv drops to the sandbox uid
    else:  # the count is per real uid: leave room for what this user already runs
        args.append(f"--nproc={_processes_of(os.getuid()) + limits.processes}")
    return [*args, "--"]


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count
