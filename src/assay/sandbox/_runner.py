"""The judge: the trusted process that runs one check inside the sandbox (standard library only).

It is mounted read-only into the sandbox and started as ``python -I -S runner.pyc CONTROL DONE``
(compiled by the verifier, ``_judge_files``: compiling this file cost every run about 7 ms of
CPU; ``runner.py`` where it could not be; ``-I``: no environment, no user site, and not even
the script's folder on ``sys.path``). It does nothing before the control message arrives, so a
sandbox may start it ahead of its check (``_warm``). The
check's code and a per-run nonce arrive on the CONTROL pipe, read to their announced length (not
to the pipe's end of file, which a process forked from the verifier can hold off) and closed
before anything else runs. The DONE pipe is close-on-exec: no process this one starts inherits it. The
nonce is never on a command line, in an environment or in a file. Before the check runs, the
judge makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so a process of the same uid
cannot open its ``/proc/PID/mem`` or ``/proc/PID/fd`` or attach to it.

``python`` and ``hidden_python``: the check runs here, as the real ``__main__`` module, with a
``sys.path`` that never holds the workspace, so ``import math`` is always the standard library's
and nothing the judge imports (``traceback``, ``unittest``) can come from the workspace. One
finder, first in ``sys.meta_path`` (the standard PathFinder is taken out), resolves every import:
the standard library and site-packages first; any other module found in the workspace, also
through a ``sys.path`` entry the check added (``src/``, ``""`` after ``os.chdir``, a zip), is a
proxy; anything else is refused. An audit hook (which cannot be removed) refuses running
code from a workspace file in this process, reading a workspace ``.pth`` file, and
unpickling anything but plain data. Importing a workspace module gives a proxy: the
candidate's code runs in its own process, and only plain data crosses back (``_proxy.py`` says exactly what crosses and how
candidate objects and exceptions look here; ``_candidate.py`` is that process's side). That
process is a zygote: a copy of this one forked first thing, before the control message (and so
the nonce) was read, which closes the control and done pipes at once and waits, running nothing,
until the check imports a workspace module. When the check runs to its last line, every test it
defines passed (``_tests.py``), and the functions a check relies on to fail are still the same
objects (compared with ``is``), the judge writes the nonce to DONE. When the check fails (an
assertion, an exception, a failed test) once the candidate's process was started, so the
failure is about the answers it gave and not a limit's consequence (a call into a process that
died never returns to the check), the judge reports ``failed`` with the nonce: the verifier
then believes no limit counted elsewhere in the sandbox. A check that never started the
candidate's process (it compares what a program it started printed, or reads files) fails on
its own exception or ``sys.exit`` the same way, unless that may be a limit's consequence
(``_ended_by_the_check``: a resource error, the judge's own ``MemoryError``, its own
``subprocess`` timeout, a program it waited for killed as a limit kills).

Everything checked code runs in carries the fence (``_fence.py``), a second seccomp filter that
refuses signals to the judge, pid 1 and their process group (and, in a shell check, to bash).
The zygote is forked first and fences itself (``_zygote``: a session of its own, a fence that
allows ``kill(0)`` of its own group, and a Landlock signal scope that keeps it off every thread
of the judge); the candidate's process is its child, which the judge adopts, so it can make a
process group of its own (``_lead_the_session``). Then the judge starts its parked drain
thread (``_parked_thread``) and loads the fence on itself, naming its pid and that thread's
id, so the programs a check starts and bash inherit it; bash adds its own pid and a Landlock
scope between fork and exec (``_shellrun``).
The judge's own code is held to it as well: a check cannot signal its own judge process
either, nor its process group (``kill(0)``). A judge that could not load it runs nothing of the
check (``runner_error``).

``shell``: bash runs the check as a child of this process (``_shellrun.py``); no harness
variable or command runs in that shell before the check's last line. When bash reported the
status of the check's last line (its own datagram, with the run's token) and that status is
not 0, the judge reports ``failed`` too: the check concluded, so its status decides, not a
limit counted elsewhere in the sandbox (80 sleepers left behind by ``solve.sh``). When the
check's processes tampered with that report channel (``_shellrun``), the judge reports
``failed`` and ends the check refuted, saying so.

A ``MemoryError`` that ends a python check is not reported as ``failed`` when it is the judge's
own (it may be the run's memory limit), but it is when it is the candidate's, raised here by the
proxy (``_proxy.raised_for_candidate``): that is an answer the check received.

The helpers are loaded without the import system, from beside this file: compiled by the
verifier (``name.code``) when the sandbox mounts them, else from source (``_judge_files.py``).

Limits are not reported from here: a MemoryError or EAGAIN is something candidate code can raise
itself, so only the verifier, from what it observes of the process, names a limit.
"""

import builtins
import marshal
import os
import sys

TYPE_CHECKING = False  # not typing's: the runner imports nothing it can avoid
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36
HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    """The judge: fork the candidate's zygote, read the verifier's job, run the check, report completion with the nonce."""
    control_fd, done_fd = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(done_fd, False)
    try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
        # A process group of its own, whose parent (pid 1) stays in another group of the same
        # session: never orphaned while the judge lives. In init's group 1, which is orphaned
        # (init's parent is outside the session), a process that stops itself and a sibling
        # that exits make the kernel send SIGHUP to the whole group, judge and bash included,
        # which no fence sees (adv-fence2).
        os.setpgid(0, 0)
    except OSError:
        pass  # a session leader already leads its group
    fence = _module("_fence")
    adopting = _prctl(PR_SET_CHILD_SUBREAPER, 1)  # the zygote's child becomes this one's
    zygote = _zygote(fence, control_fd, done_fd)  # before the nonce exists; it fences itself
    worker = _parked_thread()  # the output or report drain, its id known to the fence
    _tell_zygote(zygote, worker)
    unfenced = _fence_self(fence, worker)  # before anything else: all this process starts has it
    spec = marshal.loads(_read_control(control_fd))  # the verifier's, never checked code's
    zygote = _adopt(zygote, adopting)
    nonce = spec.pop("nonce")
    # Every message is built before checked code runs, which may replace anything afterwards.
    started, completed = _message(nonce, "started"), _message(nonce, "completed")
    tampered, runner_error = _message(nonce, "tampered"), _message(nonce, "runner_error")
    failed = _message(nonce, "failed")
    _STATE["delimiter"] = _delimiter(nonce)
    _STATE["max_reply"] = spec.get("max_reply", 64 << 20)
    del nonce
    write, exit_now = os.write, os._exit
    if not _nondumpable():
        write(done_fd, runner_error)
        exit_now(70)
    if unfenced:  # nothing of the check runs where it could signal this process
        write(2, f"\nassay: {unfenced}\n".encode("utf-8", "replace"))
        write(done_fd, runner_error)
        exit_now(70)
    os.chdir(spec["cwd"])
    if spec["mode"] == "shell":
        if zygote is not None:
            os.close(zygote[1])  # it reads the end of its pipe and exits
        write(done_fd, started)
        try:
            status, reached_end, broken = _load("_shellrun")["run"](spec["code"], fence, worker)
        except OSError as exc:  # bash could not be started fenced: nothing of the check ran
            write(2, f"\nassay: {exc}\n".encode("utf-8", "replace"))
            write(done_fd, runner_error)
            exit_now(70)
        if broken:  # the check's processes tampered with bash's report to the judge
            write(done_fd, failed)
            write(2, f"\nassay: refuted: the report channel was tampered with: {broken}\n".encode())
            exit_now(1)
        if reached_end:
            if status:
                write(done_fd, failed)  # bash's own report: the check concluded it failed
            write(done_fd, completed)
        exit_now(status)
    _watch_children(os)  # before the guards are read: it wraps os.kill, which they hold
    guards = _guards(sys, os, builtins)
    guarded = guards()
    check = _main_module(spec["filename"])
    _install_finder(spec["cwd"], spec["path"], zygote)
    _STATE["found"] = lambda: _found(done_fd, failed)
    _STATE["start_thread"] = None if worker is None else worker[1]
    sys.addaudithook(_audit_hook(spec["cwd"], _STATE["refuse"]))
    _guard_extensions(_STATE["refuse"])
    _STATE["zygote_pid"] = 0 if zygote is None else zygote[0]
    write(done_fd, started)
    tests, stop = None, ()
    if "unittest" in spec["code"] or "def test_" in spec["code"] or "class Test" in spec["code"]:
        styles = _load("_tests")
        tests = styles["Tests"](check, spec["code"], spec["filename"], _refute, _print_traceback)
        stop = styles["Exit"]
    try:
        code = compile(spec["code"], spec["filename"], "exec", optimize=0)
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            exec(code, check.__dict__)
        except stop:
            pass  # unittest.main() ended the program, as it does for its users
        if tests is not None:
            tests.run_and_judge()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if status:
            _ended_by_the_check(done_fd, failed, exc)
        _finish()
        exit_now(status)
    except BaseException as exc:
        _ended_by_the_check(done_fd, failed, exc)
        _print_traceback()
        _finish()
        exit_now(1)
    try:
        _finish()
        now = guards()
        if len(now) != len(guarded) or any(a is not b for a, b in zip(now, guarded, strict=True)):
            write(done_fd, tampered)
            exit_now(1)
        write(done_fd, completed)
    except BaseException:
        write(done_fd, runner_error)
        exit_now(70)
    exit_now(0)


# What the runner's own helpers share with it; set before checked code runs.
_STATE: "dict[str, Any]" = {"candidate_raised": lambda exc: False, "cut_short": ()}


def _delimiter(nonce: str) -> bytes:
    """The line after which only the candidate's output follows (half of the nonce: the
    candidate never sees it during the run; the verifier splits the output on it)."""
    return b"assay-candidate-output " + nonce[16:].encode()


def _found(done_fd: int, failed: bytes) -> None:
    """The check failed on answers the candidate's process gave: a finding about the work,
    which no limit counted elsewhere in the sandbox can turn into "inconclusive".

    Reported once the candidate's process was started, even if it has died since: a call
    into a dead process never comes back here (the proxy ends the check, reporting nothing),
    so what failed was the check's own code on values that had already crossed. (Asking
    whether it was still alive let a candidate that answered 41 and was then OOM-killed, by
    its own thread or by the judge's next allocation, mask the failed comparison.)"""
    started = _STATE.get("candidate_started")
    if started is not None and started():
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            os.write(done_fd, failed)
        except OSError:
            pass


def _ended_by_the_check(done_fd: int, failed: bytes, exc: BaseException) -> None:
    """The check's own code ended it with ``exc`` (an exception, or ``sys.exit`` non-zero):
    report ``failed`` when that is its conclusion on answers it received, so no limit counted
    elsewhere in the sandbox (a program the check started left an OOM-killed child) turns it
    into "inconclusive" (adv-fence2), as a shell check's failing last line decides.

    Not when it may be a limit's consequence, which only the verifier names, from what it
    observed: the judge's own ``MemoryError`` anywhere in its chain, a resource error (a fork
    or a thread refused, no memory, no space, no descriptor), the check's own ``subprocess``
    timeout, or a program the judge waited for that died the way a limit ends a process
    (SIGKILL, SIGXCPU, SIGXFSZ, or a shell's 128 + one of them; not one the check signalled
    itself): its output may have been cut short. A program's own ``exit(137)`` reads as a
    shell's report of such a death (``os.system`` users are not refuted for a limit): a known
    edge (adv-sbx3 F2, a strict xfail). The candidate's process (``_found``) is the exception: once it was started, what
    failed is about the answers it gave, as before. Nothing here reads what the checked code
    wrote: only the exception's types and numbers, and what the kernel said of the judge's
    own children."""
    started = _STATE.get("candidate_started")
    if started is not None and started():
        if not isinstance(exc, MemoryError) or _STATE["candidate_raised"](exc):
            _found(done_fd, failed)  # a MemoryError crossed from candidate code is its answer
        return
    if not isinstance(exc, Exception | SystemExit) or _cut_short(exc):
        return
    try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
        os.write(done_fd, failed)
    except OSError:
        pass


_RESOURCE_ERRNOS = frozenset((11, 12, 23, 24, 28, 122))
"""EAGAIN, ENOMEM, ENFILE, EMFILE, ENOSPC, EDQUOT: the run's limits as a system call sees them."""
_LIMIT_SIGNALS = frozenset((9, 24, 25))
"""SIGKILL (the OOM killer, the CPU limit's end), SIGXCPU, SIGXFSZ."""


def _cut_short(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from or during) may be a limit's
    consequence, or a program the judge waited for ended as a limit ends a process."""
    _reap_children()
    if _STATE["cut_short"]:
        return True
    raised_for_candidate, seen = _STATE["candidate_raised"], 0
    step: BaseException | None = exc
    while step is not None and seen < 100:
        seen += 1
        if not raised_for_candidate(step):
            if isinstance(step, MemoryError):
                return True
            if isinstance(step, OSError) and step.errno in _RESOURCE_ERRNOS:
                return True
            if type(step) is RuntimeError and step.args == ("can't start new thread",):
                return True  # the exact error, never a message the checked code composed
            kind = type(step)
            if kind.__name__ == "TimeoutExpired" and kind.__module__ == "subprocess":
                return True
        step = step.__cause__ or step.__context__
    return False


def _watch_children(os_module: "Any") -> None:
    """Note every child the check's code waits for (``subprocess``, ``os.system``,
    ``os.wait*``) that ended as a limit ends a process (``_cut_short``). The wrappers return
    exactly what the originals do; ``subprocess`` binds them when the check imports it."""
    noted: list[int] = []
    _STATE["cut_short"] = noted
    signalled: set[int] = set()  # pids the check signalled itself (``Popen.kill``, ``os.kill``)
    grouped: list[int] = []  # process groups it signalled (``os.killpg``)

    def died(signal: int, pid: int) -> None:
        # A death the check caused itself is no limit's (adv-sbx3 F1).
        if signal in _LIMIT_SIGNALS and pid not in signalled and not grouped:
            noted.append(signal)

    def note(status: int, pid: int = 0) -> None:
        if os_module.WIFSIGNALED(status):
            died(os_module.WTERMSIG(status), pid)
        elif os_module.WIFEXITED(status):  # a shell's report of its child's death (os.system):
            died(os_module.WEXITSTATUS(status) - 128, 0)  # indistinguishable from exit(137)

    def signalling(name: str, into: "Any") -> None:
        original = getattr(os_module, name, None)
        if original is None:
            return

        def sent(target: int, signal: int) -> "Any":
            if signal in _LIMIT_SIGNALS:
                into(target)
            return original(target, signal)

        sent.__name__ = sent.__qualname__ = name
        sent.__doc__ = original.__doc__
        setattr(os_module, name, sent)

    signalling("kill", signalled.add)
    signalling("killpg", grouped.append)

    def wrap(name: str, at: "int | None") -> None:
        original = getattr(os_module, name, None)
        if original is None:
            return

        def watched(*args: "Any", **kwargs: "Any") -> "Any":
            result = original(*args, **kwargs)
            try:
                if at is None:
                    note(result)
                elif result[0]:
                    note(result[at], result[0])
            except Exception:
                pass
            return result

        watched.__name__ = watched.__qualname__ = name
        watched.__doc__ = original.__doc__
        setattr(os_module, name, watched)

    for name in ("waitpid", "wait", "wait3", "wait4"):
        wrap(name, 1)
    wrap("system", None)
    original_waitid = getattr(os_module, "waitid", None)
    if original_waitid is not None:

        def waitid(*args: "Any", **kwargs: "Any") -> "Any":
            result = original_waitid(*args, **kwargs)
            try:
                if result is not None and result.si_code in (2, 3):  # CLD_KILLED, CLD_DUMPED
                    died(result.si_status, result.si_pid)
                elif result is not None:
                    died(result.si_status - 128, 0)
            except Exception:
                pass
            return result

        waitid.__doc__ = original_waitid.__doc__
        os_module.waitid = waitid
    _STATE["waitpid"] = getattr(os_module, "waitpid", None)


def _reap_children() -> None:
    """Children of the judge that ended unwaited for (the check read a program's output to
    its end and failed before waiting for it): read how they ended, as ``_watch_children``
    does. A process closes its files before it becomes a zombie, so a child still running
    gets up to 20 ms to end (on this failure path only; the idle zygote is not waited for)."""
    import _thread  # its lock's timed wait is the sleep: no other import in the judge

    waitpid = _STATE.get("waitpid")
    if waitpid is None:
        return
    pause = _thread.allocate_lock()
    pause.acquire()
    running = _children() - {_STATE.get("zygote_pid", 0)}
    for attempt in range(21):
        for pid in list(running):
            try:
                if waitpid(pid, os.WNOHANG)[0]:
                    running.discard(pid)
            except OSError:
                running.discard(pid)
        if not running or attempt == 20:
            return
        pause.acquire(True, 0.001)


def _children() -> "set[int]":
    """This process's children (``/proc/PID/task/TID/children``; none when unreadable)."""
    found: set[int] = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children", "rb") as listing:
                found.update(int(pid) for pid in listing.read().split())
    except (OSError, ValueError):
        pass
    return found


def _message(nonce: str, *words: str) -> bytes:
    return " ".join((nonce, *words)).encode() + b"\n"


def _read_control(fd: int) -> bytes:
    """The control message: its length (8 bytes, big-endian), then that many bytes.

    Read to its announced end, not to the pipe's end of file: a process the verifier forked
    while this run waited holds a copy of the pipe's write end, and waiting for end of file
    would wait for that process (a warm run then timed out, which masked its verdict).
    """
    head = _read_exactly(fd, 8)
    data = _read_exactly(fd, int.from_bytes(head, "big")) if len(head) == 8 else b""
    os.close(fd)
    return data


def _read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, or fewer if it ends first."""
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _nondumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) (``_prctl``)."""
    return _prctl(PR_SET_DUMPABLE, 0)


def _prctl(option: int, value: int) -> bool:
    """prctl(option, value) through _ctypes (1 ms; the ctypes package would cost 5 ms);
    whether it succeeded."""
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]
        return bool(_ctypes.call_function(prctl, (option, value, 0, 0, 0)) == 0)
    except Exception:
        return False


def _adopt(
    zygote: "tuple[int, int, int, int] | None", adopting: bool
) -> "tuple[int, int, int, int] | None":
    """The zygote with the pid of the candidate's process in place of its own.

    The zygote, a session's leader, forked that process and exited (``_lead_the_session``);
    this process was a child subreaper meanwhile, so it is that process's parent now: it
    reaps the zygote, stops being a subreaper (the candidate's own orphans go to the run's
    init), and will wait for the candidate's process as for its own child. The pid comes first
    on the replies pipe, written before any candidate code exists."""
    try:
        if zygote is None:
            return None
        head = _read_exactly(zygote[2], 4)
        if len(head) != 4:
            return zygote  # it is gone: a call into it fails as any dead candidate process's
        pid = int.from_bytes(head, "big")
        if pid != zygote[0]:
            try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
                os.waitpid(zygote[0], 0)
            except OSError:
                pass
        return pid, zygote[1], zygote[2], zygote[3]
    finally:
        if adopting:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)


def _main_module(filename: str) -> "Any":
    """The check's namespace is the real ``__main__`` (what unittest.main() looks in).

    Its builtins are a private copy, so even code the check itself runs cannot make the check's
    own ``exit`` do nothing through ``builtins``.
    """
    module = type(sys)("__main__")
    module.__file__ = filename
    module.__dict__["__builtins__"] = dict(vars(builtins))
    _main_module.runner = sys.modules["__main__"]  # type: ignore[attr-defined] # keep it alive
    sys.modules["__main__"] = module
    sys.argv = [filename]
    return module


def _install_finder(
    workspace: str, site: "list[str]", zygote: "tuple[int, int, int, int] | None"
) -> None:
    """Imports: the standard library and site-packages, else the workspace by proxy, else none.

    One finder, first in ``sys.meta_path``, resolves every import, and the standard PathFinder
    is taken out, so nothing falls through to a search of the check's own ``sys.path`` entries.
    A name the trusted folders have is theirs. Any other name is looked up in the check's
    current non-trusted ``sys.path`` entries (relative ones against the current folder:
    ``sys.path.insert(0, "src")``, ``os.chdir`` + ``""``, a ``.zip``) and the workspace; found
    under the workspace, it is a proxy, imported from that entry in the candidate's process;
    found anywhere else, it is refused. Code from outside the trusted folders is never loaded
    in the judge.
    """
    trusted = [p for p in (*sys.path, *site) if p and p != workspace and p != "."]
    sys.path[:] = trusted
    roots = tuple(os.path.normpath(p) + "/" for p in (*trusted, HERE) if os.path.isabs(p))
    workspace_root = os.path.normpath(workspace) + "/"
    path_finder = sys.meta_path.pop()  # the standard PathFinder, last at startup
    state: dict[str, Any] = {}

    def proxy(name: str, is_package: bool, entry: "str | None") -> object:
        if "spec_for" not in state:
            proxy = _load("_proxy")
            paths = [workspace, *site]
            state["spec_for"] = proxy["install"](
                _source("_candidate"),
                paths,
                zygote,
                _STATE["delimiter"],
                _STATE["found"],
                _STATE["max_reply"],
                _STATE["start_thread"],
            )
            _AT_END.append(proxy["finish"])
            _STATE["candidate_started"] = proxy["candidate_started"]
            _STATE["candidate_raised"] = proxy["raised_for_candidate"]
            state["module_type"] = proxy["RemoteModule"]
        return state["spec_for"](name, is_package, entry)

    def where(found: "Any") -> str:
        origin = found.origin if isinstance(found.origin, str) else None
        if origin is None or origin == "namespace":
            locations = list(found.submodule_search_locations or ())
            origin = locations[0] if locations else ""
        return os.path.normpath(os.path.abspath(origin)) if origin else ""

    def judged(name: str, found: "Any") -> object:
        place = where(found)
        if found.origin in ("built-in", "frozen") or place.startswith(roots):
            return found
        raise ImportError(
            f"{name} ({place}) is outside the standard library, site-packages and the "
            "workspace: assay's judge does not import it",
            name=name,
        )

    class Finder:
        """First in sys.meta_path: a stdlib or site module always wins over any other file."""

        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            if "." in name:
                parent = sys.modules.get(name.rpartition(".")[0])
                remote = state.get("module_type")
                if remote is not None and isinstance(parent, remote):
                    return proxy(name, True, None)
                found = path_finder.find_spec(name, path)  # type: ignore[arg-type]
                return None if found is None else judged(name, found)
            found = path_finder.find_spec(name, trusted)
            if found is not None:
                return judged(name, found)
            entries = [
                os.path.normpath(os.path.abspath(p))
                for p in sys.path
                if isinstance(p, str) and p not in trusted
            ]
            for entry in dict.fromkeys([*entries, os.path.normpath(workspace)]):
                found = path_finder.find_spec(name, [entry])
                if found is None:
                    continue
                place = where(found)
                if place.startswith(workspace_root):
                    return proxy(name, found.submodule_search_locations is not None, entry)
                return judged(name, found)
            return None

    sys.meta_path.insert(0, Finder)  # type: ignore[arg-type]


# What ``pickle`` may build in the judge: plain data only (``pickle.find_class`` audit event).
_PICKLE_NAMES = frozenset(
    [
        *(
            ("builtins", n)
            for n in (
                "list",
                "dict",
                "set",
                "frozenset",
                "tuple",
                "int",
                "float",
                "complex",
                "str",
                "bytes",
                "bytearray",
                "bool",
                "slice",
                "range",
            )
        ),
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("collections", "deque"),
        ("decimal", "Decimal"),
        ("fractions", "Fraction"),
        ("copyreg", "_reconstructor"),
        ("_codecs", "encode"),
        *(
            (m, n)
            for m in ("numpy.core.multiarray", "numpy._core.multiarray")
            for n in ("_reconstruct", "scalar")
        ),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        *(("datetime", n) for n in ("date", "time", "datetime", "timedelta", "timezone")),
    ]
)


def _audit_hook(workspace: str, refuse: "Callable[[str], None]") -> "Callable[[str, Any], None]":
    """A second wall (audit hooks cannot be removed): the judge never runs the workspace's code.

    Refused, ending the check: executing code whose file is under the workspace (``runpy``,
    ``spec_from_file_location``, any loader; compiling alone runs nothing, and the zip importer
    compiles while merely looking a module up), reading a ``.pth`` file from it
    (``site.addsitedir`` executes their lines), and unpickling anything but plain data (a
    pickle names the functions it calls: unpickling candidate data runs candidate code).
    Reading workspace files as data stays allowed. ``exec(open(path).read())`` cannot be seen:
    its code is compiled from a string.
    """
    root = os.path.normpath(workspace) + "/"
    normpath, abspath = os.path.normpath, os.path.abspath
    allowed = _PICKLE_NAMES
    watched = frozenset(("exec", "open", "pickle.find_class", "ctypes.dlopen"))
    trusted = _trusted_roots()

    def inside(filename: object) -> bool:
        if isinstance(filename, bytes):
            filename = filename.decode("utf-8", "replace")
        if not isinstance(filename, str) or not filename or filename.startswith("<"):
            return False
        return bool(normpath(abspath(filename)).startswith(root))

    def hook(event: str, args: "Any") -> None:
        if event not in watched:
            return
        if event == "exec":
            filename = getattr(args[0], "co_filename", None)
            if inside(filename):
                refuse(f"the check ran code from the workspace in the judge ({filename})")
        elif event == "open":
            name = args[0]
            if isinstance(name, str) and name.endswith(".pth") and inside(name):
                refuse(f"the check read a .pth file of the workspace ({name}) in the judge")
        elif event == "ctypes.dlopen":
            name = args[0]
            if isinstance(name, bytes):
                name = name.decode("utf-8", "replace")
            if isinstance(name, str) and "/" in name and not _under(name, trusted):
                refuse(
                    f"the check loaded a native library from outside the system ({name}) into "
                    "the judge: its code would run where the verdict is made"
                )
        elif (str(args[0]), str(args[1])) not in allowed:  # a dotted name never is
            refuse(
                f"the check unpickled data naming {args[0]}.{args[1]}: unpickling runs the "
                "code a pickle names, so in the judge only plain data may be unpickled; load "
                "the agent's data with json, or numpy.load(allow_pickle=False)"
            )

    return hook


def _trusted_roots() -> "tuple[str, ...]":
    """Where native code the judge may load lives: the system and this Python's prefixes."""
    roots = ["/usr/", "/lib/", "/lib64/"]
    roots += [os.path.realpath(p).rstrip("/") + "/" for p in (sys.prefix, sys.base_prefix)]
    return tuple(roots)


def _under(path: str, roots: "tuple[str, ...]") -> bool:
    return os.path.realpath(path).startswith(roots)


def _guard_extensions(refuse: "Callable[[str], None]") -> None:
    """Extension modules load through ``_imp.create_dynamic``, which raises no audit event the
    hook sees: wrap it (the import machinery looks it up on ``_imp`` at each call), so a
    workspace ``.so`` loaded by ``spec_from_file_location`` never runs in the judge."""
    import _imp

    create, trusted = _imp.create_dynamic, _trusted_roots()

    def create_dynamic(spec: "Any", *rest: "Any") -> "Any":
        origin = getattr(spec, "origin", None)
        if not isinstance(origin, str) or not _under(origin, trusted):
            refuse(f"the check loaded an extension module from outside the system ({origin})")
        return create(spec, *rest)

    _imp.create_dynamic = create_dynamic


def _source(name: str) -> str:
    """One of the runner's own files, mounted read-only beside it: compiled by the verifier
    (``name.code``, marshal, which saves a few ms per check) or, without it, the source."""
    compiled = os.path.join(HERE, name + ".code")
    return compiled if os.path.exists(compiled) else os.path.join(HERE, name + ".py")


def _load(name: str) -> "dict[str, Any]":
    """Run one of the runner's own files without the import system; its namespace."""
    namespace: dict[str, Any] = {"__name__": "assay" + name}
    exec(_code(_source(name)), namespace)
    return namespace


def _code(path: str) -> "Any":
    if path in _CODE:
        return _CODE[path]
    with open(path, "rb") as source:
        data = source.read()
    return marshal.loads(data) if path.endswith(".code") else compile(data, path, "exec")


_CODE: "dict[str, Any]" = {}
"""The helpers' code, read once by a sandbox template (``_preload``) for every judge it forks."""


def _preload() -> None:
    for name in ("_proxy", "_candidate", "_fence", "_tests", "_shellrun"):
        path = _source(name)
        _CODE[path] = _code(path)
    # A forked run's judge is pid 2 of its PID namespace (its init's first child) and leads its
    # own process group (2, ``main``), its zygote pid 3 and its parked thread 4: their fences
    # (the judge's names the thread; the zygote's allows its own group's ``kill(0)``), built once.
    program, machine = _module("_fence")["program"], os.uname().machine
    program((1, 2, 4), (2,), False, machine)
    program((1, 2, 4), (2,), True, machine)


def _module(name: str) -> "dict[str, Any]":
    """``_load(name)``, once per process (a template's judges inherit it)."""
    if name not in _MODULES:
        _MODULES[name] = _load(name)
    return _MODULES[name]


_MODULES: "dict[str, dict[str, Any]]" = {}


def _parked_thread() -> "tuple[int, Callable[..., None]] | None":
    """(its thread id, ``start``) of a thread of this process started now, before the fence,
    that waits for one job: ``start(function, args)``, as ``_thread.start_new_thread`` (later
    calls start new threads). The drain of the candidate's output (``_proxy``) or of bash's
    report (``_shellrun``) runs on it, so the fence can name its id: ``kill`` given a thread's
    id signals its whole process, and programs a python check starts are outside any Landlock
    domain. None when no thread could be started (the fence then names no thread)."""
    import _thread

    job: list[Any] = []
    ready, go = _thread.allocate_lock(), _thread.allocate_lock()
    ready.acquire()
    go.acquire()
    tid = [0]

    def park() -> None:
        tid[0] = _thread.get_native_id()
        ready.release()
        go.acquire()
        job[0](*job[1])

    def start(function: "Callable[..., None]", args: "tuple[Any, ...]") -> None:
        if job:
            _thread.start_new_thread(function, args)
            return
        job[:] = [function, args]
        go.release()

    try:
        _thread.start_new_thread(park, ())
    except RuntimeError:
        return None
    ready.acquire()
    return tid[0], start


def _tell_zygote(
    zygote: "tuple[int, int, int, int] | None", worker: "tuple[int, Any] | None"
) -> None:
    """The drain thread's id (0: none), which the zygote waits for to fence itself."""
    if zygote is not None:
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            os.write(zygote[1], (0 if worker is None else worker[0]).to_bytes(4, "big"))
        except OSError:
            pass  # it is gone: a call into it fails as any dead candidate process's


def _fence_self(fence: "dict[str, Any]", worker: "tuple[int, Callable[..., None]] | None") -> str:
    """Load the fence (``_fence``) on this process, so on the programs a check starts, the
    no-zygote candidate process and bash: none of them can signal this process (its pid, or
    its drain thread's id, ``worker``), pid 1 or their process group (``kill(0)`` included:
    they share it). Why it could not be loaded, or ""."""
    threads = () if worker is None else (worker[0],)
    try:
        fence["install"]((1, os.getpid(), *threads), (os.getpgrp(),), False)
    except OSError as exc:
        return str(exc)
    return ""


def _zygote(fence: "dict[str, Any]", *inherited: int) -> "tuple[int, int, int, int] | None":
    """(pid, requests, replies, output) of a copy of this process that will run candidate code.

    Forked before the control message is read, so it never holds the nonce, and it closes the
    control and done pipes at once. Its stdout and stderr become a pipe the judge drains and
    writes out at the end, each line marked as the candidate's (``_proxy.finish``). It waits,
    running nothing, for the path of ``_candidate`` (the first time the check imports a
    workspace module) and then runs it; when the judge closes the pipe unused, it exits.

    Forked before the judge fences itself, it fences itself at once, before reading anything:
    ``setsid()`` (a session and process group of its own, which no process of the judge's
    session can join, nor any of its own leave for the judge's: ``setpgid`` stays within a
    session), then a fence protecting pid 1, the judge and the judge's group that allows
    ``kill(0)`` (whatever it or its descendants reach with it is theirs: ``os.killpg(0)``,
    coreutils ``timeout``), then a Landlock signal scope (``_fence.scope_signals``, where the
    kernel has it: it cannot signal the judge's threads either, whose ids the pid fence cannot
    name). Its fence names the judge's drain thread too (for kernels without Landlock signal
    scoping), whose id the judge sends first on the requests pipe (``_tell_zygote``). A zygote
    that could not fence itself exits, running nothing. Once fenced, it forks the candidate's
    process and exits (``_lead_the_session``), so that process, which the judge adopts, is not
    the session's leader and can make a process group of its own.
    """
    import gc

    gc.freeze()  # what exists now is never collected: neither copy writes it while scanning
    judge, group = os.getpid(), os.getpgrp()
    try:
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        output_read, output_write = os.pipe()
        pid = os.fork()
    except OSError:
        return None
    if pid:
        for fd in (requests_read, replies_write, output_write):
            os.close(fd)
        return pid, requests_write, replies_read, output_read
    try:
        own_group = True
        try:
            os.setsid()
        except OSError:
            own_group = False  # still in the judge's group: kill(0) would reach it
        os.dup2(output_write, 1)
        os.dup2(output_write, 2)
        for fd in (*inherited, requests_write, replies_read, output_read, output_write):
            os.close(fd)
        thread = _read_exactly(requests_read, 4)  # the judge's drain (``_tell_zygote``)
        if len(thread) != 4:
            return None
        tid = int.from_bytes(thread, "big")
        fence["install"]((1, judge, *((tid,) if tid else ())), (group,), own_group)
        fence["scope_signals"]()
        _lead_the_session(own_group, replies_write)  # returns in the candidate's process
        head = os.read(requests_read, 4)
        size = int.from_bytes(head, "big")
        script = marshal.loads(os.read(requests_read, size)) if len(head) == 4 else None
        if type(script) is str:
            sys.argv = [script, str(requests_read), str(replies_write)]
            exec(_code(script), {"__name__": "__main__", "__builtins__": builtins})
    finally:
        os._exit(0)


def _lead_the_session(own_group: bool, replies: int) -> None:
    """Make the candidate's process a member of the zygote's new session, not its leader, and
    tell the judge its pid (4 bytes, first on the replies pipe, written by the zygote, which
    knows it: the judge does not wait for the child to be scheduled). Returns in that process.

    ``setpgid`` on a session leader is EPERM, so a candidate that makes itself a process group
    leader (``os.setpgrp()``, to ``killpg`` its helpers later) failed, a right answer refuted
    (adv-fence2). So the zygote, the session's leader, forks the candidate's process as soon
    as it is fenced and exits; the judge is a child subreaper until then (``_adopt``), so the
    child is reparented to the judge: its parent, which waits for it and reads its status, as
    before. Done ahead, while the judge reads its control message, not when the check first
    imports the candidate. The child keeps every property of the session: it inherited the
    fence and the Landlock scope, its group is the session's, and ``setpgid`` still reaches
    only groups of this session. When the fork cannot be made (no task left), or the zygote
    leads no session, the candidate runs in the zygote itself."""
    pid = 0
    if own_group:
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            pid = os.fork()
        except OSError:
            pass  # no task left to fork: the candidate runs here, as the session's leader
        if pid == 0 and os.getpid() != os.getsid(0):
            return  # the child: the zygote wrote its pid
    os.write(replies, (pid or os.getpid()).to_bytes(4, "big"))
    if pid:
        os._exit(0)


def _refute(reason: str, finding: bool = True) -> None:
    """End the check, refuted; ``finding``: on what the candidate's code answered."""
    if finding and "found" in _STATE:
        _STATE["found"]()
    _flush()
    os.write(2, f"\nassay: refuted: {reason}\n".encode())
    _finish()
    os._exit(1)


_STATE["refuse"] = _refute


def _guards(
    sys_module: "Any", os_module: "Any", builtins_module: "Any"
) -> "Callable[[], list[object]]":
    """Functions a check relies on to fail; replacing one is tampering, never a pass."""

    def read() -> list[object]:
        # getattr with a default: deleting sys.exit is tampering too, not a crash of the runner.
        return [
            getattr(sys_module, "exit", None),
            getattr(os_module, "_exit", None),
            getattr(os_module, "abort", None),
            getattr(os_module, "kill", None),
            getattr(builtins_module, "exit", None),
            getattr(builtins_module, "quit", None),
            getattr(builtins_module, "__import__", None),
            getattr(builtins_module, "AssertionError", None),
            getattr(sys_module, "excepthook", None),
        ]

    return read


_AT_END: "list[Callable[[], None]]" = []  # the candidate's output, once it has a process


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            stream.flush()
        except Exception:
            pass


def _finish() -> None:
    """The check's own output is all written: now the candidate's, after the delimiter."""
    _flush()
    for finish in _AT_END:
        finish()


def _ours(trace: "Any") -> bool:
    # This file's own name as compiled (the runner may run from its .pyc) and its helpers'.
    own = (_ours.__code__.co_filename, HERE + "/_")
    return bool(trace.tb_frame.f_code.co_filename.startswith(own))


def _print_traceback() -> None:
    import traceback  # the standard library's: the workspace is never on this sys.path

    try:
        kind, value, trace = sys.exc_info()
        while trace is not None and _ours(trace):
            trace = trace.tb_next  # the runner's own frames say nothing about the check
        last, step = None, trace
        while step is not None:
            if not _ours(step):
                last = step
            step = step.tb_next
        if last is not None:
            last.tb_next = None  # nor do the proxy's, under a call into candidate code
        traceback.print_exception(kind, value, trace)
    except Exception:
        pass
    _flush()


if __name__ == "__main__":
    if sys.argv[1:2] == ["template"]:  # a sandbox template: fork a judge per run (_template)
        _load("_template")["serve"](int(sys.argv[2]), main, _preload, sys.argv[3:])
    else:
        main()
