"""Sandbox templates, the verifier's side: a judge started once, forked into a fresh sandbox per run.

Starting a python check's sandbox costs most of its CPU before the check's first line: the
namespaces, bubblewrap's and setpriv's exec, and above all the interpreter's start-up. A
template (``_template``, run inside a bubblewrap sandbox of its own) pays that once; for each
run it forks the run's init, which makes the run's namespaces, mounts and cgroup membership,
drops to the sandbox uid, loads the seccomp filter and forks the judge (``_template`` says
exactly how and what it keeps). This module starts templates, one per shape (bubblewrap,
interpreter, judge folder, mounts, folder target), sends them runs, and reads how each ended:

- a run's descriptors (its output pipe, a status pipe, the control and done pipes, its folder,
  its cgroup's join files) are passed with the request (``SCM_RIGHTS``) and closed here;
- the run's init writes the judge's exit status to the status pipe; nothing else in the
  sandbox holds it. A run whose status never came (the template or the init was killed, or the
  template never started it) is killed through its cgroup and is assay's failure
  (``Forked.lost``: ``Prepared.run`` raises SandboxUnavailable), unless this parent ended it
  itself or the kernel's OOM killer did;
- a template that died is replaced; one that served ``MAX_SERVED`` runs is retired: it gets no
  more runs, and exits once those it started have ended (never killing a run in progress);
- a template answers every request once it has forked the run; one that does not answer within
  ``ANSWER_WAIT`` seconds (``FIRST_ANSWER_WAIT`` for its first, which waits for its start-up)
  is hung (stopped, or stuck): it is killed with everything it started and forgotten, and the
  run is ``TemplateHung``, which the sandbox retries once, from scratch (new pipes, cgroup and
  folder, so nothing the hung template was sent is ever used again), on a new template;
- templates are started by one long-lived thread (bubblewrap's ``--die-with-parent`` follows the
  thread that started it) and end with this process.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import marshal
import os
import queue
import signal
import socket
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from functools import lru_cache
from typing import IO, Any

from assay._files import readable

MAX_SERVED = 1000
"""Runs one template forks before it is retired (its interpreter's hash secret and address
layout are then no longer those of any later run)."""
ANSWER_WAIT = 15.0
"""Seconds a template has to answer a request (it forks, which takes milliseconds; a loaded
machine can stall a process for seconds, and killing a slow but healthy template ends its
runs in progress as ``error``, so the bound is generous)."""
FIRST_ANSWER_WAIT = 60.0
"""The same for a template's first request, which it reads only once it has started."""
STATUS_GRACE = 10.0
"""Seconds to wait for a killed run's status pipe to close before calling the run lost."""


class Forked:
    """A run a template forked, as ``_reading.collect`` and ``Prepared`` see it: its output
    pipe, and a status pipe on which the run's init writes the judge's exit status."""

    def __init__(self, output_fd: int, status_fd: int) -> None:
        self.stdout: IO[bytes] | None = open(output_fd, "rb", buffering=0)  # noqa: SIM115
        self.exit_fd = status_fd
        """Readable once the run ended (status written) or its first process died."""
        self.returncode: int | None = None
        self.lost = False
        """The status never came: the run's first process died (killed) before writing it."""

    def poll(self) -> int | None:
        """The exit status if the run ended, without waiting."""
        if self.returncode is None and readable(self.exit_fd, 0):
            self._read()
        return self.returncode

    def finish(self, kill: Callable[[], None]) -> None:
        """Read the status, killing the run again (``kill``) until its first process is gone."""
        deadline = time.monotonic() + STATUS_GRACE
        while self.returncode is None:
            if readable(self.exit_fd, 0.05):
                self._read()
            elif time.monotonic() > deadline:
                self.lost, self.returncode = True, -signal.SIGKILL
            else:
                kill()

    def _read(self) -> None:
        try:
            data = os.read(self.exit_fd, 16)
        except OSError:
            data = b""
        text = data.decode("ascii", "replace")
        if text.isdigit():
            self.returncode = int(text)
        else:
            self.lost, self.returncode = True, -signal.SIGKILL

    def close(self) -> None:
        """Close the status pipe (the output pipe is ``collect``'s to close)."""
        if self.exit_fd >= 0:
            os.close(self.exit_fd)
            self.exit_fd = -1
        if self.stdout is not None:
            self.stdout.close()


_OPEN_TREE, _MOUNT_SETATTR = 428, 442  # the same numbers on x86-64 and arm64
_OPEN_TREE_CLONE, _AT_EMPTY_PATH, _AT_RECURSIVE = 1, 0x1000, 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 1, 2, 4


def detached_folder(path: str) -> int:
    """A descriptor of a read-only, nosuid, nodev copy of the mount of ``path``, attached
    nowhere (``open_tree(OPEN_TREE_CLONE)``): a template's child moves it onto the run's folder
    target in its own mount namespace (a plain bind cannot cross mount namespaces). It exists
    only for that run: unattached, it is freed with its last descriptor."""
    import ctypes

    libc = _libc()
    flags = _OPEN_TREE_CLONE | os.O_CLOEXEC
    fd = int(libc.syscall(_OPEN_TREE, -100, path.encode(), flags))  # AT_FDCWD
    if fd < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"open_tree {path}: {os.strerror(error)}")
    attributes = (ctypes.c_uint64 * 4)(
        _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV, 0, 0, 0
    )
    if libc.syscall(_MOUNT_SETATTR, fd, b"", _AT_EMPTY_PATH, attributes, 32) != 0:
        error = ctypes.get_errno()
        os.close(fd)
        raise OSError(error, f"mount_setattr {path}: {os.strerror(error)}")
    return fd


@lru_cache(maxsize=1)
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


class TemplateDied(Exception):
    """A template could not take a run (it died, or could not start): assay's failure."""


class TemplateHung(TemplateDied):
    """A template took a run's request and did not answer it in time (or hung up): it was
    killed; the run's descriptors were sent to it, so the run must be made again."""


class Template:
    """One template process and this verifier's end of its request socket."""

    def __init__(self, command: Sequence[str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            argv = [a.replace("{socket}", str(theirs.fileno())) for a in command]
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            raise TemplateDied(f"cannot start a sandbox template: {exc.strerror}") from None
        finally:
            theirs.close()
        self._socket = ours
        self._lock = threading.Lock()
        self.served = 0
        self.answered = 0

    def alive(self) -> bool:
        """Still running and taking runs."""
        return self._socket.fileno() >= 0 and self.process.poll() is None

    def fork(self, request: dict[str, Any], fds: Sequence[int]) -> None:
        """Ask for one run; ``fds`` are passed with it (this process keeps its own copies)."""
        message = marshal.dumps(request)
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
        with self._lock:
            if not self.alive():
                raise TemplateDied("the sandbox template is not running")
            try:
                self._socket.sendmsg([message], rights)
            except OSError as exc:
                raise TemplateDied(f"the sandbox template did not take the run: {exc}") from None
            self.served += 1
            wait = ANSWER_WAIT if self.answered else FIRST_ANSWER_WAIT
            answer = b""
            if readable(self._socket.fileno(), wait):
                with contextlib.suppress(OSError):
                    answer = self._socket.recv(16)
            if answer != b"k":  # _template.FORKED
                self._kill()
                raise TemplateHung(
                    f"the sandbox template did not answer a run's request within {wait:g}s "
                    "(it was killed and will be replaced)"
                    if not answer
                    else "the sandbox template answered a run's request wrongly (it was killed)"
                )
            self.answered += 1

    def _kill(self) -> None:
        """End the template and everything it started (its session: bubblewrap, its PID
        namespace's init, the template and the runs it forked); reaped in the background."""
        self._socket.close()
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.process.kill()
        threading.Thread(target=_reap, args=(self.process,), daemon=True).start()

    def retire(self) -> None:
        """No more runs: the template exits once the runs it started have ended."""
        with self._lock:
            self._socket.close()
        threading.Thread(target=_reap, args=(self.process,), daemon=True).start()

    def forget(self) -> None:
        """In a forked copy of this process: the template is the parent's; drop the socket."""
        with contextlib.suppress(OSError):
            self._socket.close()


def _reap(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
        process.wait(timeout=3600)


class Templates:
    """Templates by shape, each started on first use, replaced when dead or retired."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._templates: dict[Hashable, Template] = {}
        self._pid = os.getpid()
        _ALL.add(self)

    def fork(
        self,
        key: Hashable,
        command: Callable[[], Sequence[str]],
        request: dict[str, Any],
        fds: Sequence[int],
    ) -> None:
        """Send one run to the template of shape ``key`` (started with ``command()`` when
        there is none alive); one retry on a fresh template. Raises TemplateDied."""
        if os.getpid() != self._pid:
            self.forget()
        for attempt in range(2):
            template = self._template(key, command, fresh=attempt > 0)
            try:
                template.fork(request, fds)
            except TemplateHung:
                self._forget(key, template)  # already killed; never retried with these fds
                raise
            except TemplateDied:
                if attempt:
                    raise
                continue
            if template.served >= MAX_SERVED:
                self._retire(key, template)
            return

    def _template(
        self, key: Hashable, command: Callable[[], Sequence[str]], fresh: bool
    ) -> Template:
        with self._lock:
            template = self._templates.get(key)
            if template is not None and (fresh or not template.alive()):
                del self._templates[key]
                template.retire()
                template = None
            if template is None:
                template = _start(command())
                self._templates[key] = template
            return template

    def _retire(self, key: Hashable, template: Template) -> None:
        self._forget(key, template)
        template.retire()

    def _forget(self, key: Hashable, template: Template) -> None:
        with self._lock:
            if self._templates.get(key) is template:
                del self._templates[key]

    def close(self) -> None:
        """Retire every template (runs in progress end as they would)."""
        with self._lock:
            templates = list(self._templates.values())
            self._templates.clear()
        for template in templates:
            template.retire()

    def forget(self) -> None:
        """In a forked child: the templates are the parent's."""
        with contextlib.suppress(RuntimeError):
            self._lock.release()
        self._lock = threading.Lock()
        for template in self._templates.values():
            template.forget()
        self._templates = {}
        self._pid = os.getpid()


_STARTS: queue.SimpleQueue[tuple[Sequence[str], Future[Template]]] = queue.SimpleQueue()
_STARTER: list[threading.Thread] = []
_STARTER_LOCK = threading.Lock()


def _start(command: Sequence[str]) -> Template:
    """A template started by the one starter thread, which lives as long as this process
    (``--die-with-parent`` ends a template when the thread that started it ends)."""
    with _STARTER_LOCK:
        if not _STARTER or not _STARTER[0].is_alive():
            thread = threading.Thread(
                target=_starter, args=(_STARTS,), name="assay-templates", daemon=True
            )
            thread.start()
            _STARTER[:] = [thread]
    future: Future[Template] = Future()
    _STARTS.put((command, future))
    return future.result()


def _starter(starts: queue.SimpleQueue[tuple[Sequence[str], Future[Template]]]) -> None:
    while True:
        command, future = starts.get()
        try:
            future.set_result(Template(command))
        except BaseException as exc:  # handed to the caller, who reports it
            future.set_exception(exc)


_ALL: weakref.WeakSet[Templates] = weakref.WeakSet()
TEMPLATES = Templates()
"""The process's templates, shared by every ``Sandbox(zygote=True)``."""


@atexit.register
def _close_all() -> None:
    for templates in list(_ALL):
        if templates._pid == os.getpid():
            templates.close()


def _forget_all() -> None:
    global _STARTS, _STARTER_LOCK
    _STARTS = queue.SimpleQueue()
    _STARTER_LOCK = threading.Lock()
    _STARTER.clear()
    for templates in list(_ALL):
        templates.forget()


os.register_at_fork(after_in_child=_forget_all)
