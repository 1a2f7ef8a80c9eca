"""Regular expressions with a time limit.

The ``regex`` package stops a search after ``timeout`` seconds on any thread, unlike SIGALRM-based
limits that only work on the main thread. A catastrophic pattern therefore costs at most the
configured time and yields ``inconclusive``; it never hangs the verifier.

That ``timeout`` is measured on the *process's* CPU clock, not the searching thread's: while other
threads search (a batch's samples judged on threads, the service's requests), each one's budget is
spent by all of them, so a correct answer whose search fits its limit alone could come back
``inconclusive`` because of its siblings (adversarial finding S1). ``search`` therefore charges a
search only its own thread's CPU; see ``_timed_search``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
        found = _timed_search(compiled, "", timeout)
    except TimeoutError:
        raise ValueError(f"does not finish searching even empty text within {timeout:g}s") from None
    if found is not None:
        raise ValueError("matches the empty string, so it would accept any text")
    return pattern


class PatternTimeout(Exception):
    """The search ran past its limit; the caller reports inconclusive."""


def search(pattern: str, text: str, timeout: float) -> Any:
    """Search ``text``; returns the match or None, raises PatternTimeout once the search has
    used ``timeout`` seconds of its own thread's CPU (see ``_timed_search``)."""
    try:
        return _timed_search(compile_pattern(pattern), text, timeout)
    except TimeoutError:
        raise PatternTimeout(f"the pattern did not finish within {timeout:g}s") from None


OWN_SHARE = 0.9
"""A timed-out try that used at least this share of its limit of its own thread's CPU counts as
its own timeout: the process clock also holds a little CPU of idle threads (an event loop), and
a pathological search alone should not be retried for it."""
EXCLUSIVE_TRIES = 2
"""Searches again, alone, after a timeout that came before this thread used its limit. The
first alone try is normally decisive; a second covers CPU taken meanwhile by threads that are
not searching. So a search costs its own thread at most ``1 + EXCLUSIVE_TRIES`` limits of CPU."""


class _SharedOrAlone:
    """A readers-writer lock that prefers writers: first tries share it, a retry holds it alone.
    Once a retry waits, no new first try starts, so the retry runs as soon as the running first
    tries end (each ends within its limit of process CPU, which only advances faster when more
    threads run)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._sharing = 0
        self._alone = False
        self._waiting_alone = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._alone or self._waiting_alone:
                self._cond.wait()
            self._sharing += 1
        try:
            yield
        finally:
            with self._cond:
                self._sharing -= 1
                if not self._sharing:
                    self._cond.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._waiting_alone += 1
            try:
                while self._alone or self._sharing:
                    self._cond.wait()
            finally:
                self._waiting_alone -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._cond:
                self._alone = False
                self._cond.notify_all()


_SEARCHES = _SharedOrAlone()


def _timed_search(compiled: Any, text: str, timeout: float) -> Any:
    """``compiled.search(text)``, raising ``TimeoutError`` only once one try of it has used
    ``timeout`` seconds of this thread's own CPU (``time.thread_time``).

    ``regex``'s ``timeout`` counts the process's CPU, so while other threads search a try can
    stop after a fraction of its limit. Searches therefore run concurrently (a shared lock) on
    the first try; a try that times out having used less than its limit of its own thread's CPU
    is run again from the start, with the full limit, holding the lock alone: no other regex
    search of the process runs meanwhile, so the process clock is (nearly) this thread's clock.
    A retry is a new search, not a continuation, so it gets the whole limit: giving it only the
    remainder would turn a search that needs 0.9 s, contended on its first try, into a timeout.
    If even alone a try stops early (threads that do not search took CPU), it is tried again,
    at most ``EXCLUSIVE_TRIES`` times in all, and then reported as a timeout: a timeout is never
    a verdict (callers say ``inconclusive``), and no verdict ever comes from a partial search.
    Cost: at most ``(1 + EXCLUSIVE_TRIES) * timeout`` of this thread's CPU; while a retry runs,
    other searches wait for it (at most ``timeout`` of process CPU each).
    """
    start = time.thread_time()
    with _SEARCHES.shared():
        try:
            return compiled.search(text, timeout=timeout)
        except TimeoutError:
            if time.thread_time() - start >= OWN_SHARE * timeout:
                raise
    for _ in range(EXCLUSIVE_TRIES):
        with _SEARCHES.alone():
            start = time.thread_time()
            try:
                return compiled.search(text, timeout=timeout)
            except TimeoutError:
                if time.thread_time() - start >= OWN_SHARE * timeout:
                    raise
    raise TimeoutError(f"the search did not finish within {timeout:g}s of this thread's CPU")
