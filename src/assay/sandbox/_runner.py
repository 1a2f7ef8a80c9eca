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

import contextlib
import errno
import json
import os
import sys


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
    spec = json.loads(_read_all(control_fd))
    nonce = spec.pop("nonce")
    completed = json.dumps({"nonce": nonce, "event": "completed"}).encode() + b"\n"
    started = json.dumps({"nonce": nonce, "event": "started"}).encode() + b"\n"
    if spec["mode"] == "shell":
        os.chdir(spec["cwd"])
        os.write(done_fd, started)
        script = (
            spec["code"]
            + "\n__assay_status=$?\n"
            + f"printf '%s' '{completed.decode().strip()}' >&{done_fd}\n"
            + "exit $__assay_status\n"
        )
        os.execv("/bin/bash", ["bash", "-c", script])
    limit_memory = (
        json.dumps({"nonce": nonce, "event": "limit", "limit": "memory"}).encode() + b"\n"
    )
    limit_procs = (
        json.dumps({"nonce": nonce, "event": "limit", "limit": "processes"}).encode() + b"\n"
    )
    del nonce, spec["mode"]
    write, exit_now = os.write, os._exit
    os.set_inheritable(done_fd, False)
    os.chdir(spec["cwd"])
    sys.path[:0] = spec["path"]
    write(done_fd, started)
    sys.argv = [spec["filename"]]
    namespace = {"__name__": "__main__", "__file__": spec["filename"], "__builtins__": __builtins__}
    try:
        code = compile(spec.pop("code"), spec["filename"], "exec")
        exec(code, namespace)
    except SystemExit as exc:
        _flush()
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        exit_now(status)
    except MemoryError:
        write(done_fd, limit_memory)
        exit_now(1)
    except OSError as exc:
        if exc.errno == errno.EAGAIN:
            write(done_fd, limit_procs)
        _print_traceback()
        exit_now(1)
    except BaseException:
        _print_traceback()
        exit_now(1)
    _flush()
    write(done_fd, completed)
    exit_now(0)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


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
