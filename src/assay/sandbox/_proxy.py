"""The judge's side of a python check's calls into candidate code (standard library only).

The runner loads this file (without the import system) the first time a check imports a module
of the workspace. That module is then a proxy: the candidate's code runs in its own process
(``_candidate.py``), started now, inside the same sandbox; attribute reads and calls cross to it
over two pipes, and only plain data comes back:

- None, bool, int, float, complex, str, bytes, and lists, tuples, dicts, sets and frozensets of
  them, rebuilt here by a strict decoder (tagged, length-prefixed, capped in depth and size) as
  their exact built-in types: an ``int`` whose ``__eq__`` says yes cannot be sent, only an int;
- any other object (a function, a class, an instance, a generator) stays in the candidate's
  process and is a ``Remote`` handle here: calls, attribute reads and writes, ``len``, ``in``,
  indexing, iteration and ``str()`` cross over; ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``,
  ``bool()`` and ``hash()`` end the check, refuted, naming the candidate's type, so no candidate
  object ever takes part in the check's comparisons;
- an exception raised by candidate code is raised here as the nearest built-in exception class
  (a candidate ``class BadInput(ValueError)`` arrives as ``ValueError``), with its plain
  arguments and messages capped; never a candidate class.

A reply that breaks the format, a candidate process that dies or hangs up mid-call, and a value
that may not cross end the check at once (exit 1, a message on stderr, no completion), so a check
cannot catch them by accident.

What the candidate's process prints goes to a pipe only the judge reads, drained at all times by
a thread (so a chatty call never blocks on a full pipe) and kept, capped. It is written once, at
the very end, after the check's own output: a delimiter line made from the run's nonce (which
candidate code never sees), then the candidate's lines, each starting with ``candidate| ``. The
verifier matches a check's ``value`` / ``pattern`` only against what comes before the delimiter.
"""

import builtins
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

MAX_REPLY = 64 << 20
MAX_DEPTH = 100
MAX_TEXT = 2000
MARK = b"candidate| "  # must equal assay.sandbox._judge_files.CANDIDATE_MARK
MAX_LINE = 4000
MAX_OUTPUT = 64 << 10  # of the candidate's output kept for the run's output; the rest counted
_END_WAIT = 0.5  # seconds the judge waits, at the end, for the candidate's last output
_FORBIDDEN = ("==", "!=", "<", "<=", ">", ">=", "bool()", "hash()")
_NOT_CATCHABLE = ("StopIteration", "StopAsyncIteration")
# Starts _candidate from its compiled form (marshal, written by the verifier) or its source.
_BOOT = (
    "import marshal, sys\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "code = marshal.loads(data) if sys.argv[1].endswith('.code') else compile(data, sys.argv[1], 'exec')\n"
    "del data\n"
    "exec(code)\n"
)


class Malformed(Exception):
    """The candidate's process sent bytes that are not a well-formed reply."""


def refuse(reason: str) -> "NoReturn":
    """End the check here: refuted, with ``reason`` on stderr; never returns."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib would cost an import on every check
            stream.flush()
        except Exception:
            pass
    os.write(2, f"\nassay: refuted: {reason}\n".encode("utf-8", "replace"))
    finish()
    os._exit(1)


class Host:
    """The candidate's process, woken on first use, then asked one request at a time.

    It is the runner's zygote when there is one: a copy of the runner forked before the run's
    nonce was read, idle until now (a fork costs about 1 ms; a new interpreter, 12 ms or more).
    Otherwise a new interpreter is started here.
    """

    def __init__(
        self, script: str, paths: "Sequence[str]", zygote: "tuple[int, int, int, int] | None"
    ) -> None:
        self._script = script
        self._paths = list(paths)
        self._zygote = zygote
        self._pid = 0
        self._requests = self._replies = self._output = -1
        self.chunks: list[bytes] = []  # the candidate's output, as the drain thread read it
        self.written = [0]  # how much it wrote in all
        self.drained: Any = None  # a lock the drain thread releases at the end of the output

    def request(self, op: str, *fields: "Any", iterating: bool = False) -> object:
        if not self._pid:
            self._start()
        body = marshal.dumps((op, *fields))
        try:
            os.write(self._requests, len(body).to_bytes(4, "big") + body)
        except OSError:
            self._died()
        head = self._read(4)
        size = int.from_bytes(head, "big")
        if size > MAX_REPLY or size < 1:
            refuse(f"the candidate's process sent a reply of {size} bytes (malformed or too large)")
        reply = self._read(size)
        try:
            value = decode(reply[1:])
        except (Malformed, RecursionError, TypeError, ValueError, UnicodeError, OverflowError):
            refuse("the candidate's process sent a malformed reply")
        kind = reply[:1]
        if kind == b"V":
            return value
        if kind == b"R" and type(value) is str:
            refuse(f"candidate code returned {_short(value)}")
        if kind == b"X" and type(value) is tuple and len(value) == 3:
            raise _rebuild(value, iterating) from None
        refuse("the candidate's process sent a malformed reply")

    def _start(self) -> None:
        if self._zygote is not None:
            self._pid, self._requests, self._replies, self._output = self._zygote
            self._drain()
            self._send(self._script)
        else:
            requests_read, self._requests = os.pipe()
            self._replies, replies_write = os.pipe()
            self._output, output_write = os.pipe()
            argv = [sys.executable, "-I", "-S", "-c", _BOOT, self._script]
            argv += [str(requests_read), str(replies_write)]
            os.set_inheritable(requests_read, True)
            os.set_inheritable(replies_write, True)
            actions = [
                (os.POSIX_SPAWN_DUP2, output_write, 1),
                (os.POSIX_SPAWN_DUP2, output_write, 2),
            ]
            try:
                self._pid = os.posix_spawn(
                    sys.executable, argv, dict(os.environ), file_actions=actions
                )
            finally:
                for fd in (requests_read, replies_write, output_write):
                    os.close(fd)
            self._drain()
        self._send(self._paths)

    def _drain(self) -> None:
        import _thread

        self.drained = _thread.allocate_lock()
        self.drained.acquire()
        _thread.start_new_thread(_drain, (self._output, self.chunks, self.written, self.drained))

    def alive(self) -> bool:
        """The candidate's process was started and has not ended."""
        if self._pid <= 0:
            return False
        try:
            return os.waitpid(self._pid, os.WNOHANG) == (0, 0)
        except OSError:
            return False

    def stop(self) -> None:
        """No more requests: the candidate's process ends; wait briefly for its last output."""
        if self._requests >= 0:
            try:  # noqa: SIM105 - contextlib would cost an import on every check
                os.close(self._requests)
            except OSError:
                pass
            self._requests = -1
        if self.drained is not None:
            self.drained.acquire(True, _END_WAIT)

    def _send(self, value: "Any") -> None:
        body = marshal.dumps(value)
        try:
            os.write(self._requests, len(body).to_bytes(4, "big") + body)
        except OSError:
            self._died()

    def _read(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = os.read(self._replies, min(left, 1 << 20))
            if not chunk:
                self._died()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _died(self) -> None:
        try:
            _, status = os.waitpid(self._pid, 0)
            how = f"exit status {os.waitstatus_to_exitcode(status)}"
        except OSError:
            how = "it is gone"
        refuse(f"the candidate's process ended during a call ({how})")


def _drain(fd: int, chunks: "list[bytes]", written: "list[int]", done: "Any") -> None:
    """The drain thread: read the candidate's output as it comes, keep the first MAX_OUTPUT."""
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            kept = written[0]
            if kept < MAX_OUTPUT:
                chunks.append(chunk[: MAX_OUTPUT - kept])
            written[0] = kept + len(chunk)
    except BaseException:
        pass
    finally:
        done.release()


_END: "dict[str, Any]" = {}


def finish() -> None:
    """Once, at the end: the candidate's output, after the check's own and the delimiter."""
    host = _END.pop("host", None)
    if host is None:
        return
    host.stop()
    data = b"".join(list(host.chunks))
    if not data:
        return
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    marked = b"".join(
        MARK + line[at : at + MAX_LINE] + b"\n"
        for line in lines
        for at in range(0, max(len(line), 1), MAX_LINE)
    )
    more = host.written[0] - len(data)
    if more > 0:
        marked += MARK + f"({more} more bytes not kept)\n".encode()
    try:
        marked = b"\n" + _END["delimiter"] + b"\n" + marked
        while marked:
            marked = marked[os.write(1, marked) :]
    except OSError:
        pass


def candidate_alive() -> bool:
    return _HOST is not None and _HOST.alive()


def _rebuild(value: tuple[object, ...], iterating: bool) -> BaseException:
    """A built-in exception standing for the candidate's; never the candidate's class."""
    name, args, candidate_type = value
    cls = getattr(builtins, name, None) if type(name) is str else None
    allowed = name not in _NOT_CATCHABLE or (iterating and name == "StopIteration")
    if not (type(cls) is type and issubclass(cls, Exception) and allowed):
        cls = RuntimeError
        args = (f"candidate code raised {_short(candidate_type)}",)
    if type(args) is not tuple:
        args = ()
    args = tuple(a[:MAX_TEXT] if type(a) in (str, bytes) else a for a in args)
    for attempt in (args, tuple(str(a) for a in args[:1])):
        try:
            return cls(*attempt)
        except Exception:
            continue
    return RuntimeError(f"candidate code raised {_short(candidate_type)}")


def decode(data: bytes) -> object:
    """Exact built-in values from a reply; raises Malformed on anything else."""
    value, end = _decode(data, 0, 0)
    if end != len(data):
        raise Malformed("trailing bytes")
    return value


_SINGLE = {b"N": None, b"T": True, b"F": False}
_SEQUENCES = {b"l": list, b"t": tuple, b"S": set, b"z": frozenset}


def _decode(data: bytes, at: int, depth: int) -> tuple[object, int]:
    if depth > MAX_DEPTH:
        raise Malformed("nested too deeply")
    tag = data[at : at + 1]
    at += 1
    if tag in _SINGLE:
        return _SINGLE[tag], at
    if tag == b"i":
        raw, at = _chunk(data, at)
        return int.from_bytes(raw, "big", signed=True), at
    if tag == b"f":
        raw, at = _chunk(data, at)
        return float.fromhex(raw.decode("ascii")), at
    if tag == b"c":
        real, at = _chunk(data, at)
        imag, at = _chunk(data, at)
        return complex(float.fromhex(real.decode("ascii")), float.fromhex(imag.decode("ascii"))), at
    if tag == b"s":
        raw, at = _chunk(data, at)
        return raw.decode("utf-8", "surrogatepass"), at
    if tag == b"b":
        return _chunk(data, at)
    if tag == b"h":
        raw, at = _chunk(data, at)
        description, at = _decode(data, at, depth + 1)
        if type(description) is not str:
            raise Malformed("a handle without a description")
        return Remote(int.from_bytes(raw, "big", signed=True), description), at
    if tag in _SEQUENCES or tag == b"d":
        count, at = _count(data, at)
        items = []
        for _ in range(count * 2 if tag == b"d" else count):
            item, at = _decode(data, at, depth + 1)
            if type(item) is Remote:
                raise Malformed("a handle inside a container")
            items.append(item)
        if tag == b"d":
            result = dict(zip(items[::2], items[1::2], strict=True))
            if len(result) != count:
                raise Malformed("a dict with repeated keys")
            return result, at
        built = _SEQUENCES[tag](items)
        if tag in (b"S", b"z") and len(built) != count:
            raise Malformed("a set with repeated items")
        return built, at
    raise Malformed(f"unknown tag {tag!r}")


def _count(data: bytes, at: int) -> tuple[int, int]:
    if at + 4 > len(data):
        raise Malformed("truncated")
    count = int.from_bytes(data[at : at + 4], "big")
    if count > len(data) - at:  # every item takes at least one byte
        raise Malformed("a count larger than the reply")
    return count, at + 4


def _chunk(data: bytes, at: int) -> tuple[bytes, int]:
    size, at = _count(data, at)
    return data[at : at + size], at + size


_HOST: "Host | None" = None
_HANDLES: "dict[int, tuple[int, str]]" = {}  # id(Remote) -> (the candidate's id, description)


def _ask(remote: "Remote", op: str, *fields: object, iterating: bool = False) -> object:
    assert _HOST is not None
    return _HOST.request(op, _HANDLES[id(remote)][0], *fields, iterating=iterating)


def _describe(remote: "Remote") -> str:
    return _HANDLES[id(remote)][1]


def _refuse_comparison(remote: "Remote", *_: object) -> "NoReturn":
    refuse(
        f"the check compared or tested a candidate {_describe(remote)} object "
        f"({', '.join(_FORBIDDEN)} on candidate objects are refused): only plain data "
        "returned by candidate code can be compared"
    )


def _crossing(name: str) -> "Any":
    """A dunder attribute answered by the candidate's object, never by this class."""
    return property(lambda self: _ask(self, "getattr", name))


class Remote:
    # No docstring, no annotations and no names of its own beyond dunders: whatever the check
    # reads off a handle is the candidate's (the module docstring says what crosses).
    __slots__ = ("__weakref__",)

    def __init__(self, handle: int, description: str) -> None:
        _HANDLES[id(self)] = (handle, description[:120])

    def __del__(self) -> None:
        _HANDLES.pop(id(self), None)

    __doc__ = _crossing("__doc__")
    __annotations__ = _crossing("__annotations__")  # noqa: RUF012
    __name__ = _crossing("__name__")
    __qualname__ = _crossing("__qualname__")
    __module__ = _crossing("__module__")

    def __call__(self, *args: object, **kwargs: object) -> object:
        packed = tuple(_pack(a) for a in args)
        return _ask(self, "call", packed, {k: _pack(v) for k, v in kwargs.items()})

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # the interpreter's own probes never cross
        return _ask(self, "getattr", name)

    def __setattr__(self, name: str, value: object) -> None:
        _ask(self, "setattr", name, _pack(value))

    def __iter__(self) -> "Remote":
        iterator = _ask(self, "iter")
        if type(iterator) is not Remote:
            refuse(f"iter() of a candidate {_describe(self)} did not return an iterator")
        return iterator

    def __next__(self) -> object:
        return _ask(self, "next", iterating=True)

    def __len__(self) -> int:
        return _exact(_ask(self, "len"), int, "len()")  # type: ignore[no-any-return]

    def __getitem__(self, key: object) -> object:
        return _ask(self, "getitem", _pack(key))

    def __contains__(self, item: object) -> bool:
        return _exact(_ask(self, "contains", _pack(item)), bool, "in")  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return _exact(_ask(self, "str"), str, "str()")  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<candidate {_describe(self)}>"

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse_comparison  # type: ignore[assignment]
    __bool__ = __hash__ = _refuse_comparison  # type: ignore[assignment]


def _exact(value: object, kind: type, what: str) -> "Any":
    if type(value) is not kind:
        refuse(f"{what} on a candidate object returned a {type(value).__name__}, not {kind}")
    return value


def _pack(value: object) -> tuple[int, object]:
    """An argument for the candidate: a handle by id, or plain data (checked, then marshalled)."""
    if type(value) is Remote:
        return 1, _HANDLES[id(value)][0]
    if not _plain(value, 0):
        raise TypeError(
            f"a {type(value).__name__} cannot be passed to candidate code: only plain data "
            "and objects the candidate's code returned can cross"
        )
    return 0, value


def _plain(value: object, depth: int) -> bool:
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str, bytes):
        return True
    if depth > MAX_DEPTH:
        return False
    if kind in (list, tuple, set, frozenset):
        return all(_plain(v, depth + 1) for v in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            _plain(k, depth + 1) and _plain(v, depth + 1)
            for k, v in value.items()  # type: ignore[attr-defined]
        )
    return False


def _short(text: object) -> str:
    return str(text)[:300] if type(text) is str else "something unreadable"


class RemoteModule(type(sys)):  # type: ignore[misc]
    """A workspace module seen from the check: its attributes live in the candidate's process."""

    def __getattr__(self, name: str) -> object:
        if name == "__all__":
            return _star_names(self.__dict__["__remote__"], sys._getframe(1).f_globals)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _ask(self.__dict__["__remote__"], "getattr", name)


def _star_names(remote: Remote, importer: "dict[str, object]") -> list[str]:
    """What ``from module import *`` binds: names the candidate's module defines itself
    (the candidate's side says which), never a dunder or private name, and never a name the
    importing check has already bound or a builtin: a star import adds names, it cannot
    replace the check's ``isclose``, ``math``, ``abs`` or ``__name__``."""
    names = _ask(remote, "names")
    if type(names) is not list:
        refuse("the candidate's process listed its module's names as something else than a list")
    return [
        n
        for n in names
        if type(n) is str
        and n.isidentifier()
        and not n.startswith("_")
        and n not in importer
        and not hasattr(builtins, n)
    ]


class Loader:
    """Creates a ``RemoteModule`` and imports the real module in the candidate's process."""

    def create_module(self, spec: "Any") -> RemoteModule:
        return RemoteModule(spec.name)

    def exec_module(self, module: RemoteModule) -> None:
        assert _HOST is not None
        entry = module.__spec__.loader_state
        remote = _HOST.request("import", module.__name__, entry)
        if type(remote) is not Remote:
            refuse(f"importing {module.__name__} in the candidate's process gave plain data")
        module.__dict__["__remote__"] = remote


def install(
    script: str,
    paths: "Sequence[str]",
    zygote: "tuple[int, int, int, int] | None",
    delimiter: bytes,
) -> "Callable[..., Any]":
    """Start serving candidate imports; returns the function that makes a module's spec."""
    global _HOST
    _HOST = Host(script, paths, zygote)
    _END.update(host=_HOST, delimiter=delimiter)
    loader = Loader()
    spec_class = type(sys.__spec__)

    def spec_for(name: str, is_package: bool, entry: "str | None") -> object:
        spec = spec_class(name, loader, is_package=is_package)  # type: ignore[arg-type]
        spec.loader_state = entry  # the sys.path entry it was found in, for the candidate
        return spec

    return spec_for
