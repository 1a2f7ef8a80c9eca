"""The candidate's process in a python check: it imports and runs the workspace's code.

The judge (``_runner.py``) runs this file inside the same sandbox, the first time the check
imports a workspace module, in its zygote (a copy of the runner forked before the run's nonce
existed) or, without one, as ``python -I -S -c BOOT candidate REQUESTS REPLIES``. Everything
here may be replaced by the candidate's code, which runs in this process: the judge trusts
nothing this process sends. It decodes every reply with a strict decoder that builds only exact
built-in types (``_proxy.py``), so this file's job is only to be useful to an honest candidate.
It carries the judge's fence (``_fence.py``, inherited), so that nothing it starts can signal
the judge.

A call's reply (``C``) is its result followed by a dict {argument index: new state} of the list,
dict and set arguments the call changed, which the judge applies to its own objects in place.

Requests come from the judge as ``marshal`` frames (the judge's own bytes; marshal is never used
in the other direction). Replies are tagged, length-prefixed values:

    N None  T True  F False  i int  f float  c complex  s str  b bytes
    l list  t tuple  S set  z frozenset  d dict
    r a list, dict or set already in this reply (its index, in the order they ended)
    a argument i of the call being answered (the check's own object)
    h handle (an object that stays here: its id, a description and the bits of its abilities)

An object that is not plain data stays in this process and crosses as a handle (its id and a
short description); an instance of a subclass of a plain type (an ``int`` whose ``__eq__``
lies) is refused, naming its type. A reply is written into one buffer and never grows past the
cap the judge sent (``max_reply``, from the run's memory): a value over it is answered ``L``
(too large to judge) before it is copied, so taking a huge value across never costs this
process a second copy of it (the judge refuses a larger reply on its own anyway). Standard library only, and nothing imported beyond what a
bare interpreter has loaded before the workspace goes on ``sys.path``.
"""

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PLAIN = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)
_CONTAINERS = {list: b"l", tuple: b"t", set: b"S", frozenset: b"z"}
_SHARED = (list, dict, set)  # mutable: their identity crosses (back-references, arguments)
_MESSAGE_CHARS = 2000
_DESCRIPTION_CHARS = 120
# The protocol methods a handle's object has, sent as bits (the judge's ``_proxy._ABILITIES``).
_ABILITIES = ("__call__", "__iter__", "__next__", "__len__", "__getitem__", "__contains__")


class Refused(Exception):
    """A value that may not cross: the judge ends the check, naming ``args[0]``."""


class TooLarge(Exception):
    """A reply that would pass the cap: ``args[0]`` says how large, for the judge's refusal."""


_CAP = [1 << 26]  # the judge's cap on one reply (``max_reply``), sent with the paths


def main() -> None:
    """The candidate's process: import the workspace's modules and answer the judge's requests until told to stop."""
    requests, replies = int(sys.argv[-2]), int(sys.argv[-1])
    os.set_inheritable(requests, False)
    os.set_inheritable(replies, False)
    paths, _CAP[0] = marshal.loads(_read_frame(requests))
    os.chdir(paths[0])
    sys.path[:0] = paths[:1]  # the workspace first, as `python solve.py` would have it
    sys.path.extend(paths[1:])
    sys.argv = [""]
    objects: dict[int, object] = {}
    while True:
        frame = _read_frame(requests)
        if not frame:
            os._exit(0)
        reply = bytearray()
        try:
            request = marshal.loads(frame)
            if request[0] == "call":
                reply += b"C"
                _call(reply, request, objects)
            else:
                reply += b"V"
                _write_top(reply, _serve(request, objects), objects, {})
        except BaseException as exc:  # every candidate failure goes to the judge
            reply = _failure(exc)
        _flush()
        _write_all(replies, len(reply).to_bytes(4, "big"))
        _write_all(replies, reply)


def _failure(exc: BaseException) -> bytearray:
    """The reply for a call that did not give a value that may cross."""
    reply = bytearray()
    try:
        if isinstance(exc, TooLarge):
            return _encode_into(reply, b"L", str(exc.args[0]))
        if isinstance(exc, Refused):
            return _encode_into(reply, b"R", str(exc.args[0])[:_MESSAGE_CHARS])
        return _encode_into(reply, b"X", _exception(exc))
    except TooLarge as too_large:  # an exception too large to cross (a huge int argument)
        return _encode_into(bytearray(), b"L", str(too_large.args[0]))


def _encode_into(reply: bytearray, kind: bytes, value: object) -> bytearray:
    reply += kind
    _write(reply, value, {})
    return reply


def _write_all(fd: int, data: "bytes | bytearray") -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _serve(request: "Any", objects: dict[int, "Any"]) -> object:
    op = request[0]
    if op == "import":
        name, entry = str(request[1]), request[2]
        if type(entry) is str and entry not in sys.path:
            sys.path.insert(0, entry)  # the check found it there (``sys.path.insert(0, "src")``)
        __import__(name)
        return sys.modules[name]
    target = objects[request[1]]
    if op == "getattr":
        return getattr(target, request[2])
    if op == "names":  # for ``from module import *``: what the module defines itself
        names = getattr(target, "__all__", None)
        if names is None:
            names = [n for n, v in vars(target).items() if _defined_in(target, v)]
        return [str(n) for n in names if not str(n).startswith("_")]
    if op == "setattr":
        setattr(target, request[2], _unpack(request[3], objects))
        return None
    if op == "iter":
        return iter(target)
    if op == "next":
        return next(target)
    if op == "len":
        return len(target)
    if op == "getitem":
        return target[_unpack(request[2], objects)]
    if op == "contains":
        return _unpack(request[2], objects) in target
    if op == "str":
        text = str(target)
        if type(text) is not str:
            raise Refused(f"str() returned a {_type_name(text)}, not a str")
        return text
    raise ValueError(f"unknown request {op!r}")


def _defined_in(module: "Any", value: object) -> bool:
    """Not an imported module, nor a function or class imported from elsewhere."""
    if type(value) is type(sys):
        return False
    home = getattr(value, "__module__", None) if callable(value) else module.__name__
    return bool(home == module.__name__)


def _call(out: bytearray, request: "Any", objects: dict[int, "Any"]) -> None:
    """A call's reply: its result, then the new state of each list, dict or set argument it
    changed. An argument in the result crosses as "argument i" (the check's own object)."""
    target = objects[request[1]]
    args = [_unpack(a, objects) for a in request[2]]
    kwargs = {k: _unpack(v, objects) for k, v in request[3].items()}
    given = [*args, *kwargs.values()]
    before = [_snapshot(v) for v in given]
    result = target(*args, **kwargs)
    memo: dict[Any, Any] = {
        id(v): b"a" + _int(i) for i, v in enumerate(given) if type(v) in _SHARED
    }
    changed = {
        i: v for i, v in enumerate(given) if before[i] is not None and _snapshot(v) != before[i]
    }
    _write_top(out, result, objects, memo)
    _write(out, changed, {})


def _snapshot(value: "Any") -> "bytes | None":
    if type(value) not in _SHARED:
        return None
    try:
        return marshal.dumps(value)
    except Exception:
        return b"?"  # now holds something marshal cannot write: changed


def _unpack(packed: "Any", objects: dict[int, object]) -> object:
    tag, value = packed
    return objects[value] if tag == 1 else value


def _write_top(
    out: bytearray, value: object, objects: dict[int, object], memo: "dict[Any, Any]"
) -> None:
    """Plain data as itself; any other object stays here and crosses as a handle."""
    if type(value) in _PLAIN or isinstance(value, _PLAIN):
        _write(out, value, memo)
        return
    handle = len(objects) + 1
    objects[handle] = value
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    description = _type_name(value) + (f" {name}" if type(name) is str else "")
    kind = type(value)
    mro = getattr(kind, "__mro__", ())
    abilities = sum(
        1 << i for i, n in enumerate(_ABILITIES) if any(n in vars(c) for c in mro)
    )  # defined by the object's class (``hasattr(cls, ...)`` would also ask its metaclass)
    out += b"h" + _int(handle)
    _write(out, description[:_DESCRIPTION_CHARS], memo)
    _write(out, abilities, memo)


def _write(out: bytearray, value: "Any", memo: "dict[Any, Any]") -> None:
    """Append ``value`` to ``out``. ``memo``: the lists, dicts and sets already written in
    this reply, by id: one seen again crosses as a back-reference (``r`` + its index, counted
    as each one ends), so shared rows arrive shared."""
    kind: Any = type(value)
    if kind in _SHARED:
        ref = memo.get(id(value))
        if ref is not None:
            out += ref
            return
        _write_new(out, value, kind, memo)
        memo[id(value)] = b"r" + _int(memo.setdefault("count", 0))
        memo["count"] += 1
        return
    _write_new(out, value, kind, memo)


def _room(out: bytearray, more: int) -> None:
    """Raise TooLarge before ``out`` would grow past the cap by ``more`` bytes."""
    if len(out) + more > _CAP[0]:
        raise TooLarge(f"{len(out) + more} bytes or more > {_CAP[0]} bytes")


def _write_new(out: bytearray, value: "Any", kind: "Any", memo: "dict[Any, Any]") -> None:
    if value is None:
        out += b"N"
    elif kind is bool:
        out += b"T" if value else b"F"
    elif kind is int:
        _room(out, value.bit_length() // 8 + 6)
        out += b"i" + _int(value)
    elif kind is float:
        out += b"f" + _str(value.hex())
    elif kind is complex:
        out += b"c" + _str(value.real.hex()) + _str(value.imag.hex())
    elif kind is str:
        _room(out, len(value) + 5)  # never fewer bytes than characters: no copy made yet
        raw = value.encode("utf-8", "surrogatepass")
        _room(out, len(raw) + 5)
        out += b"s" + len(raw).to_bytes(4, "big")
        out += raw
    elif kind is bytes:
        _room(out, len(value) + 5)
        out += b"b" + len(value).to_bytes(4, "big")
        out += value
    elif kind in _CONTAINERS:
        items = list(value)
        _room(out, len(items) + 5)  # every item takes at least one byte
        out += _CONTAINERS[kind] + _count(items)
        for item in items:
            _write(out, item, memo)
        _room(out, 0)
    elif kind is dict:
        _room(out, 2 * len(value) + 5)
        out += b"d" + len(value).to_bytes(4, "big")
        for key, item in value.items():  # not copied: a thread that changes it raises here
            _write(out, key, memo)
            _write(out, item, memo)
        _room(out, 0)
    else:
        for plain in _PLAIN:
            if isinstance(value, plain):
                raise Refused(
                    f"a {_type_name(value)} (a subclass of {plain.__name__}): only plain data "
                    "(None, bool, int, float, complex, str, bytes and lists, tuples, dicts, "
                    "sets of them, with their exact built-in types) crosses to the check"
                )
        raise Refused(
            f"a {_type_name(value)} inside a container: only plain data crosses to the check "
            "inside a list, tuple, dict or set"
        )


def _count(items: list[object]) -> bytes:
    return len(items).to_bytes(4, "big")


def _int(number: int) -> bytes:
    raw = number.to_bytes(number.bit_length() // 8 + 1, "big", signed=True)
    return len(raw).to_bytes(4, "big") + raw


def _str(text: str) -> bytes:
    data = text.encode("ascii")
    return len(data).to_bytes(4, "big") + data


def _exception(exc: BaseException) -> tuple[str, tuple[object, ...], str]:
    """(the nearest built-in exception class's name, plain args, the candidate's type name)."""
    builtin = "RuntimeError"
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            builtin = cls.__name__
            break
    args = tuple(
        (a[:_MESSAGE_CHARS] if type(a) in (str, bytes) else a)
        for a in exc.args
        if type(a) in (type(None), bool, int, float, str, bytes)
    )
    if len(args) != len(exc.args):
        args = (str(exc)[:_MESSAGE_CHARS],)
    return builtin, args, _type_name(exc)


def _type_name(value: object) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "")
    name = str(getattr(kind, "__qualname__", "object"))
    return name if module in ("builtins", None, "") else f"{module}.{name}"


def _read_frame(fd: int) -> bytes:
    head = _read_exact(fd, 4)
    if len(head) < 4:
        return b""
    return _read_exact(fd, int.from_bytes(head, "big"))


def _read_exact(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib would be one more import on every check
            stream.flush()
        except Exception:
            pass


if __name__ == "__main__":
    main()
