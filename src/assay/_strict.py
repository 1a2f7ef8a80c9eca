"""Type-strict deep equality and strict JSON, the comparison every structured check uses.

Python's ``==`` says ``True == 1 == 1.0`` and ``[1, True] == [1, 1]``; a reward built on it pays
for the wrong type. Here two values are equal only when they have the same type at every level
(dict keys included) and then compare equal. A non-finite float (NaN, infinity) equals nothing,
itself included: ``1e999`` and ``1e400`` both overflow to infinity, and must not match.

Strict JSON refuses what plain ``json`` quietly turns into a different value: ``NaN`` and
``Infinity``, a number literal beyond the float range (``1e999`` would become infinity), a
non-zero literal that underflows to ``0.0`` (``1e-999``), an integer too long to convert, and
duplicate keys. Every JSON assay reads (task files, answers, workspace files, checker output,
``assay verify`` inputs) goes through ``loads_strict``.

Nesting is capped at ``JSON_DEPTH_LIMIT`` levels before parsing. Without a cap, the depth at
which a document is refused (Python's recursion limit, less the frames of whoever is calling)
depends on the caller's stack: the same submission was verified through one interface and
refuted through another. A fixed cap, well inside the recursion limit, gives every interface the
same reading; a reader whose own code recurses deeper per level (a schema validator) passes a
lower one. Envelopes (a request body, a batch line) pass ``max_depth=None``: the work inside them
is capped where it is judged, and one deep value stays its own item's problem.

It lives on the ground floor (beside ``_errors``) because every layer reads JSON: the sandbox
reads checker results and fixtures with it, the checks read answers and workspace files.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from assay._errors import InvalidInput

_NUMBER = (int, float)


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER


def strict_equal(expected: Any, actual: Any, tolerance: float | None = None) -> bool:
    """Deep, type-strict equality.

    With ``tolerance`` (absolute), an int and a float compare numerically at every level, so
    ``2`` and ``2.0000001`` can match; a bool is never a number, and non-finite values never
    match.
    """
    stack: list[tuple[Any, Any]] = [(expected, actual)]
    while stack:
        a, b = stack.pop()
        if tolerance is not None and _is_number(a) and _is_number(b):
            try:
                if not (math.isfinite(a) and math.isfinite(b)) or abs(a - b) > tolerance:
                    return False
            except OverflowError:  # an int beyond the float range is never "close"
                return False
            continue
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if len(a) != len(b):
                return False
            typed_b = {(type(k), k): v for k, v in b.items()}
            for key, value in a.items():
                typed_key = (type(key), key)
                if typed_key not in typed_b:
                    return False
                stack.append((value, typed_b[typed_key]))
        elif isinstance(a, list | tuple):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif isinstance(a, float):
            if not math.isfinite(a) or a != b:
                return False
        elif a != b:
            return False
    return True


JSON_DEPTH_LIMIT = 500
"""The deepest nesting of arrays and objects read by default; deeper is refused, whoever asks
(half the interpreter's recursion limit: room for any caller's own frames)."""
_TOKENS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
"""A string (possessive: an unterminated one runs to the end in one linear pass, never retried
from each later quote) or a bracket."""


def nesting_depth_over(text: str, limit: int = JSON_DEPTH_LIMIT) -> bool:
    """Whether ``text``'s arrays and objects nest deeper than ``limit`` (strings skipped whole,
    so a bracket inside one does not count). Exact for valid JSON, which is all that matters:
    invalid JSON is refused by the parser anyway. Counting brackets first keeps the common case
    at C speed; the scan after it is linear in the text."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for token in _TOKENS.finditer(text):
        mark = token.group()[:1]
        if mark in "[{":
            depth += 1
            if depth > limit:
                return True
        elif mark in "]}":
            depth -= 1
    return False


def rebuild(value: Any, visit: Callable[[Any], tuple[Any, bool]]) -> Any:
    """``value`` rebuilt without recursion. ``visit(node)`` gives ``(new, descend)``: with
    ``descend`` false ``new`` takes the node's place; with it true ``new`` is a mapping (rebuilt
    as a dict, keys in order) or a list or tuple (rebuilt as a list) whose items are visited in
    turn. Data nested a few hundred levels (within ``JSON_DEPTH_LIMIT``) would otherwise meet
    the recursion limit at a depth set by the caller's stack, as ``strict_equal`` would."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        node, parent, key = stack.pop()
        new, descend = visit(node)
        if not descend:
            parent[key] = new
        elif isinstance(new, Mapping):
            rebuilt: dict[Any, Any] = dict.fromkeys(new)
            parent[key] = rebuilt
            stack.extend((inner, rebuilt, name) for name, inner in new.items())
        else:
            items: list[Any] = [None] * len(new)
            parent[key] = items
            stack.extend((inner, items, index) for index, inner in enumerate(new))
    return root[0]


class StrictJSONError(InvalidInput, ValueError):
    """Why a text is not strict JSON: the line and column, the duplicate key or the constant.

    An ``InvalidInput`` to whoever called ``loads_strict`` (still a ``ValueError``, as plain
    ``json`` raises); a caller reading the *work* (an answer, a workspace file) turns it into a
    refutation instead."""


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"the number {_clip(text)} is beyond the float range")
    if value == 0 and any(c in "123456789" for c in text.partition("e")[0].partition("E")[0]):
        raise StrictJSONError(f"the number {_clip(text)} underflows to 0.0")
    return value


def _clip(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C; a duplicate shows as a shorter dict, then is looked for
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} makes the object ambiguous")
            seen.add(key)
    return result


def loads_strict(text: str | bytes, max_depth: int | None = JSON_DEPTH_LIMIT) -> Any:
    """Parse JSON, refusing NaN/Infinity and duplicate keys, which plain ``json`` accepts, and
    nesting deeper than ``max_depth`` (None: only Python's own recursion limit)."""
    try:
        if isinstance(text, bytes):  # decoded as json.loads decodes (UTF-8, -16 or -32), so the
            text = text.decode(json.detect_encoding(text), "surrogatepass")  # scan reads its text
        if max_depth is not None and nesting_depth_over(text, max_depth):
            raise StrictJSONError(f"arrays and objects nest deeper than {max_depth} levels")
        return json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            object_pairs_hook=_no_duplicates,
        )
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"{exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise StrictJSONError(type(exc).__name__) from None
    except ValueError as exc:  # an integer literal past Python's digit limit
        raise StrictJSONError(f"a number cannot be read: {_clip(str(exc))}") from None


def describe(value: Any) -> str:
    """A short, typed rendering for failure details: ``1 (int)``, ``True (bool)``."""
    text = json.dumps(value) if _jsonable(value) else repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True
