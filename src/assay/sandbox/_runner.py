"""The trusted runner that executes one check inside the sandbox (standard library only).

It is mounted read-only into the sandbox and started as ``python -I -S runner.py CONTROL DONE``.
The check's code and a per-run nonce arrive on the CONTROL pipe, which is read to the end and
closed before any checked code runs, so nothing of it is left on disk or in an open descriptor.
When the code runs to its last line, the runner writes the nonce to the DONE pipe and exits at
once; ``sys.exit(0)``, ``os._exit(0)``, a patched ``exit`` or a printed "OK" never reach that line.

What this does not stop: code running in this same process that deliberately inspects the
interpreter (frames, the garbage collector) could find the nonce. The sandbox boundary, not this
channel, is what contains such code.
"""

import builtins
import errno
import marshal
import os
import sys

TYPE_CHECKING = False  # not typing's: the runner imports nothing it can avoid
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def main() -> None:
    control_fd, done_fd = int(sys.argv[1]), int(sys.argv[2])
    spec = marshal.loads(_read_all(control_fd))  # written by the verifier, never by checked code
    nonce = spec.pop("nonce")

    completed, started = _message(nonce, "completed"), _message(nonce, "started")
    if spec["mode"] == "shell":
        os.chdir(spec["cwd"])
        os.write(done_fd, started)
        script = (
            spec["code"]
            + "\n__assay_status=$?\n"
            + f"printf '%s\\n' '{completed.decode().strip()}' >&{done_fd}\n"
            + "exit $__assay_status\n"
        )
        os.execv("/bin/bash", ["bash", "-c", script])
    # Every message is built before checked code runs, which may replace anything afterwards.
    limit_memory = _message(nonce, "limit", "memory")
    os_limits = {
        errno.EAGAIN: _message(nonce, "limit", "processes"),
        errno.EFBIG: _message(nonce, "limit", "file_size"),
        errno.ENOSPC: _message(nonce, "limit", "scratch"),
    }
    tampered, runner_error = _message(nonce, "tampered"), _message(nonce, "runner_error")
    del nonce, spec["mode"]
    write, exit_now, guards = os.write, os._exit, _guards(sys, os, builtins)
    guarded = guards()
    os.set_inheritable(done_fd, False)
    os.chdir(spec["cwd"])
    sys.path[:0] = spec["path"]
    write(done_fd, started)
    sys.argv = [spec["filename"]]
    # The check's own builtins are a private copy: imported code patching builtins.exit (so that
    # a failing check's exit(1) does nothing) does not reach the check's namespace.
    namespace = {
        "__name__": "__main__",
        "__file__": spec["filename"],
        "__builtins__": dict(vars(builtins)),
    }
    try:
        code = compile(spec.pop("code"), spec["filename"], "exec", optimize=0)
        exec(code, namespace)
    except SystemExit as exc:
        _flush()
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        exit_now(status)
    except MemoryError:
        write(done_fd, limit_memory)
        exit_now(1)
    except OSError as exc:
        if exc.errno in os_limits:
            write(done_fd, os_limits[exc.errno])
        _print_traceback()
        exit_now(1)
    except BaseException:
        _print_traceback()
        exit_now(1)
    try:
        _flush()
        if guards() != guarded:
            write(done_fd, tampered)
            exit_now(1)
        write(done_fd, completed)
    except BaseException:
        write(done_fd, runner_error)
        exit_now(70)
    exit_now(0)


def _message(nonce: str, *words: str) -> bytes:
    return " ".join((nonce, *words)).encode() + b"\n"


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


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib costs the runner ~10 ms of imports on every run
            stream.flush()
        except Exception:
            pass


def _print_traceback() -> None:
    import traceback

    try:
        kind, value, trace = sys.exc_info()
        while trace is not None and trace.tb_frame.f_code.co_filename == __file__:
            trace = trace.tb_next  # the runner's own frames say nothing about the check
        traceback.print_exception(kind, value, trace)
    except Exception:
        pass
    _flush()


if __name__ == "__main__":
    main()
