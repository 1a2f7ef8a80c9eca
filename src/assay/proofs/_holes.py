"""Holes, whatever the language: put a candidate into an obligation's hole, read what is left.

A hole is a span of the obligation's text; each language finds its own (``ProofLanguage.holes``
and ``hole_at``: Agda reads ``{! !}`` and ``?`` among its own tokens, Coq and Lean take the
``{! !}`` marker as plain text). The candidate goes into a private copy: the obligation's bytes
are never changed, even if assay is killed mid-check. The reading of a non-zero exit can only
withhold success: ``progress`` needs *every* complaint to be an open hole (including holes the
candidate introduced); anything else, or anything unrecognised, is ``type_error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from assay._errors import InvalidInput

HoleStatus = Literal["solved", "progress", "type_error", "refused", "limit", "error"]
"""``limit``: the check of this candidate was stopped by a limit assay observed (time, memory,
...; ``HoleResult.limit`` says which) while a known-good proof still fits in the same limits: no
finding, but a failed attempt for a search loop. ``error`` is only assay's or the toolchain's
own failure (the known-good proof fails too), never something a candidate can cause."""
_MARKER = re.compile(r"\{!.*?!\}", re.DOTALL)


class HoleNotFound(InvalidInput):
    """No hole at the given position (or not exactly one hole in an obligation)."""


def marker_holes(text: str) -> list[tuple[int, int]]:
    """The spans of the ``{! ... !}`` markers in ``text``, read as plain text (Coq, Lean)."""
    return [match.span() for match in _MARKER.finditer(text)]


def marker_at(text: str, line: int, column: int) -> tuple[int, int]:
    """The span of the ``{! !}`` marker opening at the 1-based ``line``:``column``."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise HoleNotFound(f"line {line}, column {column} is outside the file")
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
    for span in marker_holes(text):
        if span[0] == offset:
            return span
    raise HoleNotFound(f"no hole ({{! !}}) opens at line {line}, column {column}")


def only_hole(spans: list[tuple[int, int]]) -> tuple[int, int]:
    """The obligation's single hole among ``spans`` (``ProofLanguage.holes``), else HoleNotFound."""
    if len(spans) != 1:
        raise HoleNotFound(f"an obligation must have exactly one {{! !}} hole; it has {len(spans)}")
    return spans[0]


def fill(text: str, span: tuple[int, int], candidate: str, parenthesize: bool = True) -> str:
    """``text`` with ``candidate`` in place of the hole at ``span`` (parenthesized, stripped, when
    the language reads a hole's content as one term: Agda)."""
    start, end = span
    term = f"({candidate.strip()})" if parenthesize else candidate
    return text[:start] + term + text[end:]


def classify(
    exit_code: int | None,
    finding: str,
    output: str,
    limit: str | None = None,
    remaining_holes: Callable[[str], int | None] | None = None,
    green: bool = True,
) -> tuple[HoleStatus, int]:
    """(status, remaining holes) of a batch run over a filled obligation.

    A run stopped by a limit is ``limit`` (the caller turns it into ``error`` when a known-good
    proof does not fit in the same limits either); any other machinery failure is ``error``.
    ``remaining_holes``: the language's reading of a run that failed only on open holes. A run
    that checks but whose audit withholds green (a disallowed axiom) is no solution."""
    if finding == "machinery":
        return ("limit" if limit is not None else "error"), 0
    if finding == "checks":
        return ("solved" if green else "type_error"), 0
    remaining = remaining_holes(output) if remaining_holes is not None else None
    if remaining is not None:
        return "progress", remaining
    return "type_error", 0
