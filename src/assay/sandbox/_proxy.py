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
- identity within a reply crosses: a list, dict or set that appears twice is one object here
  (``[[0] * n] * n`` arrives with shared rows); after a call, the list, dict and set arguments
  the call changed are updated in place, nested ones included, and a returned argument is the
  check's own object. A container that stays in the candidate's process (an object's internal
  list) still arrives as a copy;
- a handle has exactly the protocol methods its object has (``callable()``, ``iter()``,
  ``len()``, ``[]``, ``in``), and its ``__doc__``, ``__name__``, ``__module__`` and
  ``__annotations__`` are the candidate object's; ``from module import *`` binds only names the
  module defines, never a private name nor one the check or builtins already have;
- an exception raised by candidate code is raised here as the nearest built-in exception class
  (a candidate ``class BadInput(ValueError)`` arrives as ``ValueError``), with its plain
  arguments and messages capped; never a candidate class.

A reply that breaks the format, a candidate process that dies or hangs up mid-call, and a value
that may not cross end the check at once (exit 1, a message on stderr, no completion), so a check
cannot catch them by accident.

What may cross is capped by the run's memory, so that taking a value across can never be what
exhausts it (an out-of-memory kill there would mask the wrong value as "memory limit"): a reply
is at most ``max_reply`` bytes (a sixteenth of ``memory_mb``, at most ``MAX_REPLY``), refused
from its length header before a byte of it is read; and every reply is decoded under a budget
of what its objects take here (``BUILT_SHARE`` times the cap), refused as soon as the objects
built would pass it, before the next is made. A value seen again in a reply (a back-reference)
is charged the whole of what it names, so a value is charged as if unshared (``v = [v, v]``
nested 64 deep is a few hundred bytes whose text a check formatting it could never build).
Values the check keeps from many calls add up: what every reply built is counted towards the
judge's memory, read again (``/proc/self/statm``) whenever the room left might not hold the
next reply, and a reply whose objects would take the judge past half the run's memory
(``HELD_SHARE`` caps) is refused before they exist. Each refusal is a finding about the work:
"the value(s) returned (are) too large to judge".

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

MAX_REPLY = 64 << 20  # must equal assay.sandbox._limits.MAX_REPLY
BUILT_SHARE = 4  # what a reply's objects may take here: this many times the reply cap
HELD_SHARE = 8  # the judge's own memory, checked as replies add up: this many reply caps
_MOST_PER_BYTE = 64  # what one reply byte can take here at most, back-references aside (5 bytes: an empty set, 224)
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


class Oversized(Exception):
    """A reply whose objects would take more than their budget here."""


class TooDeep(Malformed):
    """A value nested more than ``MAX_DEPTH`` levels."""


def refuse(reason: str, finding: bool = True) -> "NoReturn":
    """End the check here: refuted, with ``reason`` on stderr; never returns.

    ``finding``: about what the candidate's live process answered (so no limit counted
    elsewhere in the sandbox can mask it); not when that process died, maybe of a limit.
    """
    found = _END.get("found")
    if finding and found is not None:
        found()
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
        self,
        script: str,
        paths: "Sequence[str]",
        zygote: "tuple[int, int, int, int] | None",
        max_reply: int,
    ) -> None:
        self._script = script
        self._paths = list(paths)
        self._zygote = zygote
        self.max_reply = max_reply
        self._held = -1  # the judge's resident memory when last read (-1: not yet)
        self._built = 0  # what replies built since: the decoder's charges, and their bytes
        self._grace = max_reply // 4  # what replies may build whatever the judge holds
        self._pid = 0
        self._requests = self._replies = self._output = -1
        self.chunks: list[bytes] = []  # the candidate's output, as the drain thread read it
        self.written = [0]  # how much it wrote in all
        self.drained: Any = None  # a lock the drain thread releases at the end of the output

    def request(
        self, op: str, *fields: "Any", iterating: bool = False, given: "Sequence[object]" = ()
    ) -> object:
        """Send one request to the candidate's process and return its plain-data reply (a handle for anything else)."""
        if not self._pid:
            self._start()
        body = marshal.dumps((op, *fields))
        try:
            os.write(self._requests, len(body).to_bytes(4, "big") + body)
        except OSError:
            self._died()
        head = self._read(4)
        size = int.from_bytes(head, "big")
        if size < 1:
            refuse("the candidate's process sent an empty reply (malformed)")
        if size > self.max_reply:  # refused unread: the candidate's process is still there
            refuse(f"the value returned is too large to judge ({size} bytes > {self.max_reply})")
        reply = self._read(size)
        kind = reply[:1]
        try:
            if kind == b"C":
                both: Any = self._decode(reply, size, given, 2)
                result, changes = both
                _apply_changes(given, changes)
                return result
            value = self._decode(reply, size)
        except TooDeep:
            refuse(f"the value returned is nested too deeply to judge (over {MAX_DEPTH} levels)")
        except (Malformed, RecursionError, TypeError, ValueError, UnicodeError, OverflowError):
            refuse("the candidate's process sent a malformed reply")
        if kind == b"V":
            return value
        if kind == b"R" and type(value) is str:
            refuse(f"candidate code returned {_short(value)}")
        if kind == b"L" and type(value) is str:
            refuse(f"the value returned is too large to judge ({_short(value)})")
        if kind == b"X" and type(value) is tuple and len(value) == 3:
            raise _rebuild(value, iterating) from None
        refuse("the candidate's process sent a malformed reply")

    def _decode(
        self, reply: bytes, size: int, given: "Sequence[object]" = (), values: int = 1
    ) -> object:
        """A reply's values, built under two budgets, or refused (never returns) past either.

        One reply's objects may take ``BUILT_SHARE`` caps here. All the replies' objects,
        kept or not, count towards the judge's memory: what each reply built (the decoder's
        charge, which is at least what its objects take) is added to the judge's resident
        memory as last read, and that is read again (``/proc/self/statm``) whenever the room
        left might not hold what this reply could build. A reply whose objects would take the
        judge past ``HELD_SHARE`` caps (half the run's memory) is refused before they exist.
        The replies' first quarter cap of objects is always admitted (``_grace``), so a check
        that itself holds much of the run's memory still gets its small answers: that much can
        never exhaust the run's memory.
        """
        allowance, most = BUILT_SHARE * self.max_reply, HELD_SHARE * self.max_reply
        fresh = self._held < 0
        if fresh or most - self._held - self._built - size < min(allowance, size * _MOST_PER_BYTE):
            self._held, self._built, fresh = _resident(), 0, True
        while True:
            room = max(most - self._held - self._built - size, self._grace)
            limit = min(allowance, room)
            budget = [limit]
            try:
                if limit <= 0:
                    raise Oversized
                decoded = decode(reply[1:], given, values, budget)
            except Oversized:
                if limit == allowance:
                    refuse(
                        f"the value returned is too large to judge ({size} bytes whose objects "
                        f"would take more than {allowance} bytes in the check's process)"
                    )
                if not fresh:  # the room was an estimate: read it, and try once more
                    self._held, self._built, fresh = _resident(), 0, True
                    continue
                refuse(
                    f"the values returned are too large to judge (the check's process holds "
                    f"{self._held} bytes; this reply of {size} would take it past {most})"
                )
            spent = limit - budget[0]
            self._grace = max(0, self._grace - spent)
            self._built += spent + size
            return decoded

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
        self._send((self._paths, self.max_reply))

    def _drain(self) -> None:
        import _thread

        self.drained = _thread.allocate_lock()
        self.drained.acquire()
        start = _START_THREAD[0] or _thread.start_new_thread
        start(_drain, (self._output, self.chunks, self.written, self.drained))

    def started(self) -> bool:
        """The candidate's process was started (it may have ended since)."""
        return self._pid > 0

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
        refuse(f"the candidate's process ended during a call ({how})", finding=False)


def _resident() -> int:
    """This process's resident memory in bytes (0 if it cannot be read)."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            fields = os.read(fd, 256).split()
        finally:
            os.close(fd)
        return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


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
_START_THREAD: "list[Callable[..., Any] | None]" = [None]


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


def candidate_started() -> bool:
    """True once the check's first import started the candidate's process (alive or not)."""
    return _HOST is not None and _HOST.started()


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
            return _marked(cls(*attempt))
        except Exception:
            continue
    return _marked(RuntimeError(f"candidate code raised {_short(candidate_type)}"))


_RAISED = object()  # the mark on an exception this module raised for the candidate's


def _marked(exc: BaseException) -> BaseException:
    exc.__dict__["_assay_candidate"] = _RAISED
    return exc


def raised_for_candidate(exc: BaseException) -> bool:
    """``exc`` stands for an exception candidate code raised (the judge's own never does).

    The runner asks this of a ``MemoryError`` that ended the check: a candidate's crosses as
    a real ``MemoryError``, which the check can catch as such, but it is the candidate's answer
    (its process may have filled a limit first), so the check's failure on it is reported;
    the judge's own is not (it may be the run's memory limit). CPython clears an exception's
    ``__dict__`` when it is freed (``MemoryError``'s free list too), so the judge's own
    ``MemoryError`` never carries the mark."""
    try:
        return vars(exc).get("_assay_candidate") is _RAISED
    except TypeError:
        return False


def decode(
    data: bytes,
    given: "Sequence[object]" = (),
    values: int = 1,
    budget: "list[int] | None" = None,
) -> object:
    """Exact built-in values from a reply; raises Malformed on anything else.

    ``given``: the call's arguments, which the reply may name (``a``); ``values``: how many
    values the reply holds (a call's: its result and the changes to its arguments), as a
    tuple when more than one. A list, dict or set seen again in the same value is the same
    object (``r``): shared rows arrive shared. ``budget``: bytes the objects built may take
    (each charged before it is made, a str checked again once made); Oversized past it. A
    value seen again is charged what it took the first time, whole: a value is charged as if
    nothing in it were shared, so a few hundred bytes of ``v = [v, v]`` nested 64 deep (whose
    text has 2**64 leaves, which a check formatting it would build) is refused, as its
    unshared form would be.
    """
    decoded, at = [], 0
    context: Any = ([], given, [sys.maxsize] if budget is None else budget, [])
    for _ in range(values):
        value, at = _decode(data, at, 0, context)
        decoded.append(value)
    if at != len(data):
        raise Malformed("trailing bytes")
    return decoded[0] if values == 1 else tuple(decoded)


def _apply_changes(given: "Sequence[object]", changes: object) -> None:
    """The new state of each argument the call changed, applied to the check's own object."""
    if type(changes) is not dict:
        raise Malformed("a call's changes are not a dict")
    for index, state in changes.items():
        if type(index) is not int or not 0 <= index < len(given):
            raise Malformed("a change to an argument that was not given")
        if type(given[index]) is not type(state) or type(state) not in (list, dict, set):
            raise Malformed("a change of an argument's type")
        _update(given[index], state, 0)


def _update(old: "Any", new: "Any", depth: int) -> None:
    """Make ``old`` equal ``new`` in place, keeping the lists and dicts nested in it."""
    if old is new:
        return
    if type(old) is set:
        old.clear()
        old.update(new)
        return
    keys = range(min(len(old), len(new))) if type(old) is list else [k for k in new if k in old]
    for key in keys:
        inner, now = old[key], new[key]
        if type(inner) is type(now) and type(now) in (list, dict, set) and depth < MAX_DEPTH:
            _update(inner, now, depth + 1)
        else:
            old[key] = now
    if type(old) is list:
        del old[len(new) :]
        old.extend(new[len(old) :])
    else:
        for key in [k for k in old if k not in new]:
            del old[key]
        for key in new:
            if key not in old:
                old[key] = new[key]


_SINGLE = {b"N": None, b"T": True, b"F": False}
_SEQUENCES = {b"l": list, b"t": tuple, b"S": set, b"z": frozenset}
# What a container costs here: (its own size, each item's), counting the list ``_decode``
# gathers the items in and a set's or dict's table (CPython 3.11, 64-bit, generously).
_CONTAINER_COST = {
    b"l": (96, 16),
    b"t": (72, 16),
    b"S": (256, 64),
    b"z": (256, 64),
    b"d": (256, 112),
}
# (the containers seen so far, the call's arguments, the budget left, what each container
# seen so far was charged, whole)
_Context = "tuple[list[object], Sequence[object], list[int], list[int]]"


def _charge(context: "Any", cost: int) -> None:
    budget = context[2]
    budget[0] -= cost
    if budget[0] < 0:
        raise Oversized


def _decode(data: bytes, at: int, depth: int, context: "Any") -> tuple[object, int]:
    if depth > MAX_DEPTH:
        raise TooDeep
    tag = data[at : at + 1]
    at += 1
    if tag in _SINGLE:
        return _SINGLE[tag], at
    if tag == b"i":
        raw, at = _chunk(data, at)
        _charge(context, 32 + len(raw))
        return int.from_bytes(raw, "big", signed=True), at
    if tag == b"f":
        raw, at = _chunk(data, at)
        _charge(context, 24 + len(raw))
        return float.fromhex(raw.decode("ascii")), at
    if tag == b"c":
        real, at = _chunk(data, at)
        imag, at = _chunk(data, at)
        _charge(context, 32 + len(real) + len(imag))
        return complex(float.fromhex(real.decode("ascii")), float.fromhex(imag.decode("ascii"))), at
    if tag == b"s":
        raw, at = _chunk(data, at)
        _charge(context, 2 * len(raw) + 56)  # its bytes, then at least one per character
        text = raw.decode("utf-8", "surrogatepass")
        _charge(context, max(0, sys.getsizeof(text) - len(raw) - 56))  # up to 4 per character
        return text, at
    if tag == b"b":
        raw, at = _chunk(data, at)
        _charge(context, len(raw) + 40)
        return raw, at
    if tag == b"h":
        _charge(context, 256)
        raw, at = _chunk(data, at)
        description, at = _decode(data, at, depth + 1, context)
        if type(description) is not str:
            raise Malformed("a handle without a description")
        abilities, at = _decode(data, at, depth + 1, context)
        if type(abilities) is not int or not 0 <= abilities < 1 << len(_ABILITIES):
            raise Malformed("a handle without its abilities")
        return _remote_class(abilities)(int.from_bytes(raw, "big", signed=True), description), at
    if tag in (b"r", b"a"):
        raw, at = _chunk(data, at)
        index = int.from_bytes(raw, "big", signed=True)
        known = context[0] if tag == b"r" else context[1]
        if not 0 <= index < len(known) or type(known[index]) not in (list, dict, set):
            raise Malformed("a reference to nothing")
        if tag == b"r":
            _charge(context, context[3][index])  # the whole of what it names, again
        return known[index], at
    if tag in _SEQUENCES or tag == b"d":
        before = context[2][0]
        count, at = _count(data, at)
        own, each = _CONTAINER_COST[tag]
        _charge(context, own + each * count)
        items = []
        for _ in range(count * 2 if tag == b"d" else count):
            item, at = _decode(data, at, depth + 1, context)
            if isinstance(item, Remote):
                raise Malformed("a handle inside a container")
            items.append(item)
        if tag == b"d":
            result = dict(zip(items[::2], items[1::2], strict=True))
            if len(result) != count:
                raise Malformed("a dict with repeated keys")
            context[0].append(result)
            context[3].append(before - context[2][0])
            return result, at
        built = _SEQUENCES[tag](items)
        if tag in (b"S", b"z") and len(built) != count:
            raise Malformed("a set with repeated items")
        if tag in (b"l", b"S"):
            context[0].append(built)
            context[3].append(before - context[2][0])
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


def _ask(
    remote: "Remote", op: str, *fields: object, iterating: bool = False, given: "Any" = ()
) -> object:
    assert _HOST is not None
    return _HOST.request(op, _HANDLES[id(remote)][0], *fields, iterating=iterating, given=given)


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
    __annotations__ = _crossing("__annotations__")
    __name__ = _crossing("__name__")
    __module__ = _crossing("__module__")

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # the interpreter's own probes never cross
        return _ask(self, "getattr", name)

    def __setattr__(self, name: str, value: object) -> None:
        _ask(self, "setattr", name, _pack(value))

    def __str__(self) -> str:
        return _exact(_ask(self, "str"), str, "str()")  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<candidate {_describe(self)}>"

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse_comparison
    __bool__ = __hash__ = _refuse_comparison


def _call(self: Remote, *args: object, **kwargs: object) -> object:
    packed = tuple(_pack(a) for a in args)
    given = (*args, *kwargs.values())  # in the order the candidate's side numbers them
    return _ask(self, "call", packed, {k: _pack(v) for k, v in kwargs.items()}, given=given)


def _iter(self: Remote) -> Remote:
    iterator = _ask(self, "iter")
    if not isinstance(iterator, Remote):
        refuse(f"iter() of a candidate {_describe(self)} did not return an iterator")
    return iterator


def _next(self: Remote) -> object:
    return _ask(self, "next", iterating=True)


def _len(self: Remote) -> int:
    return _exact(_ask(self, "len"), int, "len()")  # type: ignore[no-any-return]


def _getitem(self: Remote, key: object) -> object:
    return _ask(self, "getitem", _pack(key))


def _contains(self: Remote, item: object) -> bool:
    return _exact(_ask(self, "contains", _pack(item)), bool, "in")  # type: ignore[no-any-return]


# What a candidate object can do, in the order of the bits the candidate's side sends
# (``_candidate._ABILITIES``): a handle has exactly the protocol methods its object has, so
# ``callable()``, ``hasattr(h, "__getitem__")`` and the collections.abc checks answer for it.
_ABILITIES = (
    ("__call__", _call),
    ("__iter__", _iter),
    ("__next__", _next),
    ("__len__", _len),
    ("__getitem__", _getitem),
    ("__contains__", _contains),
)
_CLASSES: "dict[int, type[Remote]]" = {}


def _remote_class(abilities: int) -> "type[Remote]":
    cls = _CLASSES.get(abilities)
    if cls is None:
        methods = {n: f for i, (n, f) in enumerate(_ABILITIES) if abilities >> i & 1}
        crossing = {n: Remote.__dict__[n] for n in ("__doc__", "__module__")}  # not type()'s
        cls = type("Remote", (Remote,), {"__slots__": (), **crossing, **methods})
        _CLASSES[abilities] = cls
    return cls


def _exact(value: object, kind: type, what: str) -> "Any":
    if type(value) is not kind:
        refuse(f"{what} on a candidate object returned a {type(value).__name__}, not {kind}")
    return value


def _pack(value: object) -> tuple[int, object]:
    """An argument for the candidate: a handle by id, or plain data (checked, then marshalled)."""
    if isinstance(value, Remote):
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
        """A module whose attributes are read from the candidate's process."""
        return RemoteModule(spec.name)

    def exec_module(self, module: RemoteModule) -> None:
        """Import the module in the candidate's process; nothing of it runs in the judge."""
        assert _HOST is not None
        entry = getattr(module.__spec__, "loader_state", None)
        remote = _HOST.request("import", module.__name__, entry)
        if not isinstance(remote, Remote):
            refuse(f"importing {module.__name__} in the candidate's process gave plain data")
        module.__dict__["__remote__"] = remote


def install(
    script: str,
    paths: "Sequence[str]",
    zygote: "tuple[int, int, int, int] | None",
    delimiter: bytes,
    found: "Callable[[], None]",
    max_reply: int = MAX_REPLY,
    start_thread: "Callable[..., None] | None" = None,
) -> "Callable[..., Any]":
    """Start serving candidate imports; returns the function that makes a module's spec.
    ``max_reply``: the largest reply that may cross (the verifier's, from the run's memory).
    ``start_thread``: how the output drain is started (``_runner._parked_thread``: a thread
    whose id the judge's fence names), else ``_thread.start_new_thread``."""
    global _HOST
    if start_thread is not None:
        _START_THREAD[0] = start_thread
    _HOST = Host(script, paths, zygote, min(max_reply, MAX_REPLY))
    _END.update(host=_HOST, delimiter=delimiter, found=found)
    loader = Loader()
    spec_class = type(sys.__spec__)

    def spec_for(name: str, is_package: bool, entry: "str | None") -> object:
        spec = spec_class(name, loader, is_package=is_package)  # type: ignore[arg-type]
        spec.loader_state = entry  # the sys.path entry it was found in, for the candidate
        return spec

    return spec_for
