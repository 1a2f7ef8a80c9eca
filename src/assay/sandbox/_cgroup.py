"""One control group per sandboxed run: a real memory limit, a process budget, CPU accounting.

``RLIMIT_AS`` does not count memfds, tmpfs pages or the page cache, and ``RLIMIT_NPROC`` counts
per uid, so concurrent sandboxes (all uid 65534) share one budget. A cgroup per run fixes both:
the kernel charges every page the run's processes fault (anonymous, shmem, memfd, tmpfs, kernel
stacks) to it, ``pids.max`` counts its tasks alone, and its counters (``oom_kill``, ``pids``
``max`` events, CPU usage) are facts the parent reads and the candidate cannot write: the
sandbox has its own cgroup namespace and no /sys.

Both hierarchies are supported: v1 (``memory``, ``pids``, ``cpuacct`` mounted separately or
together) and v2 (one unified tree, where controllers must be enabled in the parent's
``cgroup.subtree_control``). Run cgroups are made under the verifier's own cgroup, so any limit
placed on the verifier still holds over them. Joining is race-free: the run's first process is a
``/bin/sh`` that moves itself into every folder of the run (``join_script``) and only then
``exec``s the sandbox; nothing of the candidate's exists before that.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import signal
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

CgroupVersion = Literal["cgroup-v1", "cgroup-v2"]
MemoryMechanism = Literal["cgroup-v1", "cgroup-v2", "rlimit-as"]

SANDBOX_OVERHEAD_TASKS = 3
"""Tasks of the sandbox itself inside the run's cgroup: bwrap, its PID-namespace init, and the
joining shell that becomes bwrap (counted once); added to ``pids.max`` so the checked code gets
its full ``processes`` budget."""
FORKED_OVERHEAD_TASKS = 2
"""The same for a run a sandbox template forked (``_template``): its PID namespace's init and
the judge (the checked code's budget is then the same as on a bubblewrap-started run)."""

_counter = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where run cgroups go: one parent folder per controller (v1), or one for all (v2)."""

    version: CgroupVersion
    memory: Path
    pids: Path
    cpu: Path | None
    """cpuacct (v1) or the unified folder (v2, whose cpu.stat is always there); None: none."""


@dataclass(frozen=True)
class Counters:
    """What the parent read from a run's cgroup after the run; none of it is candidate-writable."""

    oom_kills: int = 0
    """Processes the kernel killed because the run reached its memory limit."""
    pids_refused: int = 0
    """Forks and clones refused because the run reached its task budget."""
    cpu_seconds: float = 0.0
    """CPU time used by every process of the run, together."""


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _keyed(path: Path, key: str) -> int:
    """A ``key value`` line from a flat-keyed cgroup file (memory.events, pids.events...)."""
    try:
        text = path.read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == key and words[1].isdigit():
            return int(words[1])
    return 0


def _mounts() -> tuple[dict[str, tuple[str, str]], tuple[str, str] | None]:
    """v1 mounts by controller (mount point, mount root), and the v2 mount, from mountinfo."""
    v1: dict[str, tuple[str, str]] = {}
    v2: tuple[str, str] | None = None
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return v1, v2
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = fields[3], fields[4]
        if tail[0] == "cgroup2" and v2 is None:
            v2 = (point, root)
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                v1.setdefault(option, (point, root))
    return v1, v2


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" for v2."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "":
            paths[""] = parts[2]
        for controller in parts[1].split(","):
            if controller:
                paths[controller] = parts[2]
    return paths


def _folder(mount: tuple[str, str], path: str) -> Path:
    """The folder of cgroup ``path`` (relative to the hierarchy's root) under its mount."""
    point, root = mount
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root) :]
    return Path(point + "/" + path.strip("/")) if path.strip("/") else Path(point)


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _made(folder: Path) -> bool:
    """``folder`` exists (made here when missing: the parent of the run cgroups) and is writable."""
    with contextlib.suppress(OSError):
        folder.mkdir(exist_ok=True)
    return _writable(folder)


DEFAULT_PARENT = "/assay"


@lru_cache(maxsize=4)
def hierarchy(parent: str = DEFAULT_PARENT) -> Hierarchy | None:
    """The cgroup hierarchy run cgroups can be made in, or None (not root, none delegated).

    ``parent`` is the cgroup, relative to the hierarchy's root, that holds the run cgroups
    (made when missing); ``"self"`` is the verifier's own cgroup, so that any limit placed on
    the verifier also bounds its runs. The default is a dedicated ``/assay`` at the root: on v2
    a cgroup that holds processes (the verifier's own) cannot hand controllers to children, and
    a run cgroup left inside a supervisor's cgroup (by a verifier killed mid-run) would keep the
    supervisor from removing it.
    """
    v1, v2 = _mounts()
    own = _own_paths()
    if "memory" in v1 and "pids" in v1:
        where = {c: parent if parent != "self" else own.get(c, "/") for c in v1}
        memory = _folder(v1["memory"], where["memory"])
        pids = _folder(v1["pids"], where["pids"])
        cpu = _folder(v1["cpuacct"], where["cpuacct"]) if "cpuacct" in v1 else None
        swap_accounted = Path(v1["memory"][0], "memory.memsw.limit_in_bytes").exists()
        if swap_accounted and _made(memory) and _made(pids):
            return Hierarchy("cgroup-v1", memory, pids, cpu if cpu and _made(cpu) else None)
    if v2 is not None:
        folder = _folder(v2, parent if parent != "self" else own.get("", "/"))
        if _made(folder) and _enable_v2(folder):
            return Hierarchy("cgroup-v2", folder, folder, folder)
    return None


def _enable_v2(parent: Path) -> bool:
    """Memory and pids enabled for children of ``parent`` (v2: the parent's subtree_control)."""
    try:
        available = (parent / "cgroup.controllers").read_text().split()
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False
    if not {"memory", "pids"} <= set(available):
        return False
    missing = [c for c in ("memory", "pids") if c not in enabled]
    if missing:
        try:  # refused (EBUSY) when the parent holds processes and is not the root
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))
        except OSError:
            return False
    return True


class CgroupError(Exception):
    """A run cgroup could not be made or set up (assay's machinery, never the work)."""


class RunCgroup:
    """The cgroup(s) of one run: made with its limits, joined by the run's first process,
    read, emptied and removed by ``close`` (always: the caller uses it as a context manager)."""

    def __init__(
        self,
        where: Hierarchy,
        memory_bytes: int,
        tasks: int,
        overhead: int = SANDBOX_OVERHEAD_TASKS,
    ) -> None:
        self.version: CgroupVersion = where.version
        name = f"assay-{os.getpid()}-{next(_counter)}-{os.urandom(3).hex()}"
        folders = [where.memory / name]
        if where.version == "cgroup-v1":
            folders.append(where.pids / name)
            if where.cpu is not None:
                folders.append(where.cpu / name)
        self._folders: list[Path] = []
        # Named before any is made: ``close`` after a failed ``mkdir`` reads them.
        self._memory, self._pids = folders[0], folders[min(1, len(folders) - 1)]
        self._cpu: Path | None = folders[2] if len(folders) > 2 else None
        try:
            for folder in folders:
                folder.mkdir()
                self._folders.append(folder)
            if where.version == "cgroup-v1":
                (self._memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                (self._memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            else:
                self._cpu = self._memory
                (self._memory / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # absent when the kernel has no swap accounting
                    (self._memory / "memory.swap.max").write_text("0")
                with contextlib.suppress(OSError):  # so an OOM kill takes the whole run down
                    (self._memory / "memory.oom.group").write_text("1")
            (self._pids / "pids.max").write_text(str(tasks + overhead))
        except OSError as exc:
            self.close()
            raise CgroupError(f"cannot set up the run's cgroup: {exc}") from None

    def join_script(self) -> str:
        """Shell commands that move the shell itself into every folder of this run, or exit 125.

        The write order ends with the CPU-accounting folder: a run whose cgroup shows CPU time
        has joined all of them.

        On v1 the shell writes ``0`` (itself) to each ``tasks`` file, not its pid to
        ``cgroup.procs``: moving a whole process takes the kernel's global threadgroup lock for
        writing, which waits for an RCU grace period (measured: 10-13 ms per join, with every
        other cgroup operation on the machine queued behind it), while moving the calling
        thread alone skips that lock (0.7 ms). The shell has one thread, and everything of the
        run descends from it, so both put the whole run in the cgroup. v2 has no such file for a
        process outside threaded mode: there the pid goes to ``cgroup.procs``.
        """
        if self.version == "cgroup-v1":
            targets = [(f / "tasks", "0") for f in self._folders]
        else:
            targets = [(f / "cgroup.procs", "$$") for f in self._folders]
        writes = " && ".join(f"echo {who} > {shlex.quote(str(p))}" for p, who in targets)
        return f"{{ {writes}; }} 2>/dev/null || exit 125"

    def join_files(self) -> list[Path]:
        """The files a process writes ``0`` to, to move itself alone into this run's cgroup
        (in ``join_script``'s order): v1 ``tasks``, v2 ``cgroup.procs``. A sandbox template's
        child writes them through descriptors the verifier opened (``_forked``)."""
        if self.version == "cgroup-v1":
            return [f / "tasks" for f in self._folders]
        return [f / "cgroup.procs" for f in self._folders]

    def counters(self) -> Counters:
        """What the kernel counted for this run (OOM kills, refused forks, CPU): the only evidence a limit is named from."""
        if self.version == "cgroup-v1":
            oom = _keyed(self._memory / "memory.oom_control", "oom_kill")
            cpu = _read_int(self._cpu / "cpuacct.usage") / 1e9 if self._cpu else 0.0
        else:
            oom = _keyed(self._memory / "memory.events", "oom_kill")
            cpu = _keyed(self._memory / "cpu.stat", "usage_usec") / 1e6
        refused = _keyed(self._pids / "pids.events", "max")
        return Counters(oom_kills=oom, pids_refused=refused, cpu_seconds=cpu)

    @property
    def accounts_cpu(self) -> bool:
        """Whether the run's CPU time can be read while it runs (``cpu_usage``)."""
        return self.version != "cgroup-v1" or self._cpu is not None

    def cpu_usage(self) -> float:
        """CPU seconds used so far by every process of the run together (0.0 unreadable)."""
        if self.version == "cgroup-v1":
            return _read_int(self._cpu / "cpuacct.usage") / 1e9 if self._cpu else 0.0
        return _keyed(self._memory / "cpu.stat", "usage_usec") / 1e6

    def joined(self) -> bool:
        """Whether any process ever ran in the run's cgroup (CPU time was charged to it)."""
        if self._cpu is None:
            return True  # no CPU accounting to tell; the join script's exit 125 still shows
        return self.counters().cpu_seconds > 0

    def kill(self, wait: bool = True) -> None:
        """SIGKILL every process still in the run's cgroup (the sandbox's daemons included),
        and with ``wait`` until none is left.

        Typically one is left when the run's first process has been reaped: bubblewrap's init
        in the PID namespace, about to die with its parent.
        """
        if self.version == "cgroup-v2" and (self._memory / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self._memory / "cgroup.kill").write_text("1")
        for attempt in range(200):  # forks between reading and killing: caught next round
            pids = self._members()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if not wait:
                return
            time.sleep(0 if attempt < 20 else 0.005)

    def _members(self) -> list[int]:
        """Processes in the run's memory cgroup: joined first, so it holds every one of them."""
        with contextlib.suppress(OSError, ValueError):
            return [int(p) for p in (self._memory / "cgroup.procs").read_text().split()]
        return []

    def close(self) -> None:
        """Kill what is left and remove the folders; retried briefly while tasks are exiting."""
        self.kill()
        deadline = time.monotonic() + 5
        for folder in reversed(self._folders):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        _LEFT_OVER.append(folder)
                        break
                    self.kill()
                    time.sleep(0.005)
        self._folders = []
        sweep()

    def __enter__(self) -> RunCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_LEFT_OVER: list[Path] = []
"""Run cgroups whose tasks had not all exited in time; removed by a later ``sweep``."""


def sweep() -> None:
    """Retry removing run cgroups left over from earlier runs of this process."""
    for folder in list(_LEFT_OVER):
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        _LEFT_OVER.remove(folder)


def pid_alive(pid: int) -> bool:
    """True while a process of that pid exists (one we may not signal counts: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@lru_cache(maxsize=4)
def sweep_stale(where: Hierarchy) -> int:
    """Once per process and hierarchy: remove run cgroups whose creator is gone (it was killed
    mid-run, so its own cleanup never ran), killing what is left in them first. Returns how many
    were removed."""
    removed = 0
    for parent in {where.memory, where.pids, *([where.cpu] if where.cpu else [])}:
        for folder in parent.glob("assay-*-*-*"):
            creator = folder.name.split("-")[1]
            if not creator.isdigit() or pid_alive(int(creator)):
                continue
            with contextlib.suppress(OSError, ValueError):
                for pid in (folder / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)
            for _ in range(50):
                try:
                    folder.rmdir()
                    removed += 1
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
    return removed
