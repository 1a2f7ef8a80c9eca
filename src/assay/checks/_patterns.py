"""Regular expressions with a time limit.

The ``regex`` package stops a search after ``timeout`` seconds on any thread, unlike SIGALRM-based
limits that only work on the main thread. A catastrophic pattern therefore costs at most the
configured time and yields ``inconclusive``; it never hangs the verifier.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

from assay._config import DEFAULT_CONFIG


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """Compile once; raises ValueError with regex's own explanation for a malformed pattern."""
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
