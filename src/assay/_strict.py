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

It lives on the ground floor (beside ``_errors``) because every layer reads JSON: the sandbox
reads checker results and fixtures with it, the checks read answers and workspace files.
"""

from __future__ import annotations

import json
import math
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


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON, refusing NaN/Infinity and duplicate keys, which plain ``json`` accepts."""
    try:
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
