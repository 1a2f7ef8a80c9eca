"""Regular expressions with a time limit.

The ``regex`` package stops a search after ``timeout`` seconds on any thread, unlike SIGALRM-based
limits that only work on the main thread. A catastrophic pattern therefore costs at most the
configured time and yields ``inconclusive``; it never hangs the verifier.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import regex

from assay._config import DEFAULT_CONFIG

MAX_EXPANSION = 20_000
"""How many pattern elements counted repeats may expand to. ``regex`` unrolls ``x{n}`` when it
compiles, so ``(?:(?:a{1000}){1000}){1000}`` would hold the interpreter (and the GIL) for
minutes and grow by hundreds of MiB a second before any search limit applies."""

_COUNTED = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")


def expansion(pattern: str) -> int:
    """An upper bound on the elements ``pattern`` unrolls to when compiled (each counted repeat
    multiplies what it repeats by its largest count; alternatives add up). Conservative: a
    bound, not the exact size, and cheap enough to run before every compile."""
    stack: list[list[int]] = [[0, 0]]  # per open group: [total so far, size of the last atom]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        frame = stack[-1]
        if frame[0] > MAX_EXPANSION:
            return frame[0]
        if char == "\\":
            i += 2
            if pattern[i - 1 : i] in ("p", "P", "N", "x", "u", "U", "g") and pattern[i : i + 1] in (
                "{",
                "<",
            ):
                close = pattern.find("}" if pattern[i] == "{" else ">", i)
                i = n if close < 0 else close + 1
            frame[0] += 1
            frame[1] = 1
            continue
        if char == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            frame[0] += 1
            frame[1] = 1
            continue
        if char == "(":
            stack.append([0, 0])
            i += 1
            continue
        if char == ")" and len(stack) > 1:
            inner = stack.pop()[0]
            frame = stack[-1]
            frame[0] += inner
            frame[1] = inner
            i += 1
            continue
        if char == "{":
            counted = _COUNTED.match(pattern, i)
            if counted is not None and (counted.group(1) or counted.group(3)):
                low, comma, high = counted.groups()
                times = max(int(low or 0), int(high or 0) if comma else int(low or 0), 1)
                times = min(times, MAX_EXPANSION + 1)
                frame[0] += frame[1] * (times - 1)
                frame[1] *= times
                i = counted.end()
                continue
        if char == "|":
            frame[1] = 0
        else:
            frame[0] += 1
            frame[1] = 1
        i += 1
    while len(stack) > 1:
        inner = stack.pop()[0]
        stack[-1][0] += inner
    return stack[0][0]


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """Compile once; raises ValueError with regex's own explanation for a malformed pattern, or
    when counted repeats would unroll it past ``MAX_EXPANSION`` elements."""
    if expansion(pattern) > MAX_EXPANSION:
        raise ValueError(
            f"its counted repeats ({{n}}) unroll to more than {MAX_EXPANSION} elements when "
            "compiled; use fewer or smaller counts"
        )
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"is not a valid regular expression: {exc}") from None


def validate_pattern(pattern: str) -> str:
    """Spec validator: the pattern compiles and cannot match empty text.

    A pattern that matches the empty string (``a*``, ``x?``) is found in every text, so a check
    built on it could never fail. A spec is validated before any run's config is known, so the
    probe is bounded by the default config's ``regex_timeout``; a pattern that cannot even search
    the empty text within it is refused.
    """
    compiled = compile_pattern(pattern)
    timeout = DEFAULT_CONFIG.regex_timeout
    try:
        found = compiled.search("", timeout=timeout)
    except TimeoutError:
        raise ValueError(f"does not finish searching even empty text within {timeout:g}s") from None
    if found is not None:
        raise ValueError("matches the empty string, so it would accept any text")
    return pattern


class PatternTimeout(Exception):
    """The search ran past its limit; the caller reports inconclusive."""


def search(pattern: str, text: str, timeout: float) -> Any:
    """Search ``text``; returns the match or None, raises PatternTimeout past ``timeout``."""
    try:
        return compile_pattern(pattern).search(text, timeout=timeout)
    except TimeoutError:
        raise PatternTimeout(f"the pattern did not finish within {timeout:g}s") from None
