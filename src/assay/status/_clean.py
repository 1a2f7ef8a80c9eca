"""Making what a candidate or a checker wrote safe to put in a report.

A report must always be encodable, whatever the inputs held: a workspace file, an answer, a SQL
row or a checker's summary can carry a lone surrogate (``"\\ud800"`` in JSON is legal text for
Python's parser and cannot be encoded as UTF-8), a NaN, bytes or an object no JSON encoder
takes. Outcomes are cleaned when they are serialised (``Outcome.to_json``, ``Report.to_json``,
``model_dump``), so every wire form can encode them:

- a lone surrogate becomes U+FFFD, the replacement character (the report stays valid UTF-8 and
  valid JSON for every parser; the exact code unit is not kept);
- evidence becomes plain JSON: dicts with text keys, lists, text, finite numbers, booleans and
  null; a non-finite float becomes its name as text (``"nan"``, ``"inf"``), bytes and any other
  object their ``repr``, nesting deeper than ``MAX_DEPTH`` the text ``"..."``.
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def clean_value(value: Any, depth: int = 0) -> Any:
    """``value`` as plain, encodable JSON data (see the module docstring)."""
    if value is None or type(value) in (bool, int):
        return value
    if type(value) is str:
        return clean_text(value)
    if type(value) is float:
        return value if math.isfinite(value) else repr(value)
    if depth >= MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        return {
            clean_text(k if isinstance(k, str) else repr(k)): clean_value(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [clean_value(v, depth + 1) for v in value]
    # A subclass keeps only its plain value, read without calling anything it overrides.
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return clean_value(float.__float__(value), depth)
    if isinstance(value, str):
        return clean_text(str.__str__(value))
    return clean_text(repr(value))
