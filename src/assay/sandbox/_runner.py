"""The judge: the trusted process that runs one check inside the sandbox (standard library only).

It is mounted read-only into the sandbox and started as ``python -I -S runner.py CONTROL DONE``
(``-I``: no environment, no user site, and not even the script's folder on ``sys.path``). The
check's code and a per-run nonce arrive on the CONTROL pipe, read to the end and closed before
anything else runs. The DONE pipe is close-on-exec: no process this one starts inherits it. The
nonce is never on a command line, in an environment or in a file. Before the check runs, the
judge makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so a process of the same uid
cannot open its ``/proc/PID/mem`` or ``/proc/PID/fd`` or attach to it.

``python`` and ``hidden_python``: the check runs here, as the real ``__main__`` module, with a
``sys.path`` that never holds the workspace, so ``import math`` is always the standard library's
and nothing the judge imports (``traceback``, ``unittest``) can come from the workspace; a finder
placed before the standard one returns the standard module for any name the standard library or
site-packages has, even if the check put the workspace on ``sys.path`` itself. Importing a module
that exists only in the workspace (cwd) gives a proxy: the candidate's code runs in its own
process, and only plain data crosses back (``_proxy.py`` says exactly what crosses and how
candidate objects and exceptions look here; ``_candidate.py`` is that process's side). That
process is a zygote: a copy of this one forked first thing, before the control message (and so
the nonce) was read, which closes the control and done pipes at once and waits, running nothing,
until the check imports a workspace module. When the check runs to its last line, every test it
defines passed (``_tests.py``), and the functions a check relies on to fail are still the same
objects (compared with ``is``), the judge writes the nonce to DONE.

``shell``: bash runs the check as a child of this process (``_shellrun.py``); no harness
variable or command runs in that shell before the check's last line.

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

PR_SET_DUMPABLE = 4
HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    control_fd, done_fd = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(done_fd, False)
    zygote = _zygote(control_fd, done_fd)  # before the nonce exists in this process
    spec = marshal.loads(_read_all(control_fd))  # written by the verifier, never by checked code
    nonce = spec.pop("nonce")
    # Every message is built before checked code runs, which may replace anything afterwards.
    started, completed = _message(nonce, "started"), _message(nonce, "completed")
    tampered, runner_error = _message(nonce, "tampered"), _message(nonce, "runner_error")
    del nonce
    write, exit_now = os.write, os._exit
    if not _nondumpable():
        write(done_fd, runner_error)
        exit_now(70)
    os.chdir(spec["cwd"])
    if spec["mode"] == "shell":
        if zygote is not None:
            os.close(zygote[1])  # it reads the end of its pipe and exits
        write(done_fd, started)
        status, reached_end = _load("_shellrun")["run"](spec["code"])
        if reached_end:
            write(done_fd, completed)
        exit_now(status)
    guards = _guards(sys, os, builtins)
    guarded = guards()
    check = _main_module(spec["filename"])
    _install_finder(spec["cwd"], spec["path"], zygote)
    write(done_fd, started)
    tests, stop = None, ()
    if "unittest" in spec["code"] or "def test_" in spec["code"]:
        styles = _load("_tests")
        tests = styles["Tests"](check, spec["code"], _refute, _print_traceback)
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
        _flush()
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        exit_now(status)
    except BaseException:
        _print_traceback()
        exit_now(1)
    try:
        _flush()
        now = guards()
        if len(now) != len(guarded) or any(a is not b for a, b in zip(now, guarded, strict=True)):
            write(done_fd, tampered)
            exit_now(1)
        write(done_fd, completed)
    except BaseException:
        write(done_fd, runner_error)
        exit_now(70)
    exit_now(0)


def _message(nonce: str, *words: str) -> bytes:
    return " ".join((nonce, *words)).encode() + b"\n"


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _nondumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) through _ctypes (1 ms; the ctypes package would cost 5 ms)."""
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None), "prctl")  # type: ignore[arg-type]
        return bool(_ctypes.call_function(prctl, (PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0)
    except Exception:
        return False


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
    """Imports: the standard library and site-packages first, then the workspace by proxy."""
    trusted = [p for p in (*sys.path, *site) if p and p != workspace and p != "."]
    sys.path[:] = trusted
    path_finder = sys.meta_path[-1]  # the standard PathFinder, last at startup
    state: dict[str, Any] = {}

    class Finder:
        """Before the PathFinder: a stdlib or site module always wins over a workspace file."""

        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            if "." in name:
                parent = sys.modules.get(name.rpartition(".")[0])
                remote = state.get("module_type")
                if remote is not None and isinstance(parent, remote):
                    return state["spec_for"](name, True)
                return None
            found = path_finder.find_spec(name, trusted)
            if found is not None:
                return found
            kind = _candidate_module(workspace, name)
            if kind is None:
                return None
            if "spec_for" not in state:
                proxy = _load("_proxy")
                paths = [workspace, *site]
                state["spec_for"] = proxy["install"](_source("_candidate"), paths, zygote)
                _AFTER_FLUSH.append(proxy["forward_output"])
                state["module_type"] = proxy["RemoteModule"]
            return state["spec_for"](name, kind == "package")

    sys.meta_path.insert(len(sys.meta_path) - 1, Finder)  # type: ignore[arg-type]


def _candidate_module(folder: str, name: str) -> "str | None":
    """ "module" or "package" when the workspace holds a module of that top-level name."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    if name in entries and os.path.isdir(os.path.join(folder, name)):
        return "package"
    prefix = name + "."
    for entry in entries:
        if entry.startswith(prefix) and entry.endswith((".py", ".pyc", ".so")):
            return "module"
    return None


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
    with open(path, "rb") as source:
        data = source.read()
    return marshal.loads(data) if path.endswith(".code") else compile(data, path, "exec")


def _zygote(*inherited: int) -> "tuple[int, int, int, int] | None":
    """(pid, requests, replies, output) of a copy of this process that will run candidate code.

    Forked before the control message is read, so it never holds the nonce, and it closes the
    control and done pipes at once. Its stdout and stderr become a pipe the judge reads and
    passes on, each line marked as the candidate's (``_proxy.forward_output``). It waits,
    running nothing, for the path of ``_candidate`` (the first time the check imports a
    workspace module) and then runs it; when the judge closes the pipe unused, it exits.
    """
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
        os.set_blocking(output_read, False)
        return pid, requests_write, replies_read, output_read
    try:
        os.dup2(output_write, 1)
        os.dup2(output_write, 2)
        for fd in (*inherited, requests_write, replies_read, output_read, output_write):
            os.close(fd)
        head = os.read(requests_read, 4)
        size = int.from_bytes(head, "big")
        script = marshal.loads(os.read(requests_read, size)) if len(head) == 4 else None
        if type(script) is str:
            sys.argv = [script, str(requests_read), str(replies_write)]
            exec(_code(script), {"__name__": "__main__", "__builtins__": builtins})
    finally:
        os._exit(0)


def _refute(reason: str) -> None:
    _flush()
    os.write(2, f"\nassay: refuted: {reason}\n".encode())
    os._exit(1)


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


_AFTER_FLUSH: "list[Callable[[bool], None]]" = []  # the candidate's output, once it has any


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            stream.flush()
        except Exception:
            pass
    for forward in _AFTER_FLUSH:
        forward(True)


def _ours(trace: "Any") -> bool:
    return bool(trace.tb_frame.f_code.co_filename.startswith((__file__, HERE + "/_")))


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
    main()
