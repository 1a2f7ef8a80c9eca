"""Holes: put a candidate term into an obligation's one hole and judge the whole file.

The hole is ``{! ... !}`` (or Agda's ``?``) at a 1-based line and column, as Agda reports them.
The candidate goes into a private copy: the obligation's bytes are never changed, even if assay
is killed mid-check. The reading of a non-zero exit can only withhold success: ``progress`` needs
*every* complaint to be an open hole (including holes the candidate introduced); anything else,
or anything unrecognised, is ``type_error``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from assay._errors import InvalidInput
from assay.proofs._agda_lex import AgdaLexError, Token, normalise, tokens
from assay.proofs._languages import agda_remaining_holes
from assay.proofs._scan import agda_candidate_refusals

HoleStatus = Literal["solved", "progress", "type_error", "refused", "limit", "error"]
"""``limit``: the check of this candidate was stopped by a limit assay observed (time, memory,
...; ``HoleResult.limit`` says which) while a known-good proof still fits in the same limits: no
finding, but a failed attempt for a search loop. ``error`` is only assay's or the toolchain's
own failure (the known-good proof fails too), never something a candidate can cause."""
_HOLE = re.compile(r"\{!.*?!\}", re.DOTALL)


class HoleNotFound(InvalidInput):
    """No hole at the given position (or not exactly one hole in an obligation)."""


def _offset(text: str, line: int, column: int) -> int:
    """The offset in ``text`` of Agda's ``line``:``column`` (counted after Agda's line-ending
    conversion, as Agda reports positions)."""
    normal, origin = normalise(text)
    lines = normal.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise HoleNotFound(f"line {line}, column {column} is outside the file")
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
    return offset if origin is None else origin[offset]


def _agda_tokens(text: str) -> list[Token]:
    try:
        return tokens(text)
    except AgdaLexError as exc:
        raise HoleNotFound(f"the file does not read as Agda: {exc}") from None


def hole_span(text: str, line: int, column: int) -> tuple[int, int]:
    """The (start, end) of the hole (``{! !}``, nested ones included, or ``?``) that opens at
    ``line``:``column``, found among Agda's own tokens (never inside a comment or a string)."""
    start = _offset(text, line, column)
    for token in _agda_tokens(text):
        if token.start == start and (token.kind == "hole" or token.text == "?"):
            return token.start, token.end
    raise HoleNotFound(f"no hole ({{! !}} or ?) opens at line {line}, column {column}")


def only_hole(text: str, agda: bool = False) -> tuple[int, int]:
    """The span of the obligation's single ``{! !}`` hole.

    For Agda (``agda=True``) the hole is one of Agda's tokens, so a ``{!`` in a comment or a
    string is not a hole and nested holes are one; Coq and Lean obligations use the marker as
    plain text.
    """
    if agda:
        spans = [(t.start, t.end) for t in _agda_tokens(text) if t.kind == "hole"]
    else:
        spans = [m.span() for m in _HOLE.finditer(text)]
    if len(spans) != 1:
        raise HoleNotFound(f"an obligation must have exactly one {{! !}} hole; it has {len(spans)}")
    return spans[0]


def fill(text: str, span: tuple[int, int], candidate: str, parenthesize: bool = True) -> str:
    start, end = span
    term = f"({candidate.strip()})" if parenthesize else candidate
    return text[:start] + term + text[end:]


@dataclass(frozen=True)
class HoleResult:
    candidate: str
    status: HoleStatus
    remaining_holes: int
    elapsed_ms: int
    checked_from_source: bool
    verdict: dict[str, Any] | None
    diagnostics: list[str]
    limit: str | None = None
    """With status ``limit``: which limit stopped the check (``time``, ``memory``, ...)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "status": self.status,
            "limit": self.limit,
            "remainingHoles": self.remaining_holes,
            "elapsedMs": self.elapsed_ms,
            "checkedFromSource": self.checked_from_source,
            "verdict": self.verdict,
            "diagnostics": self.diagnostics,
        }


def refused(candidate: str) -> list[str]:
    return agda_candidate_refusals(candidate)


def classify(
    exit_code: int | None, finding: str, output: str, limit: str | None = None
) -> tuple[HoleStatus, int]:
    """(status, remaining holes) of an Agda batch run over a filled obligation.

    A run stopped by a limit is ``limit`` (the caller turns it into ``error`` when a known-good
    proof does not fit in the same limits either); any other machinery failure is ``error``."""
    if finding == "machinery":
        return ("limit" if limit is not None else "error"), 0
    if finding == "checks":
        return "solved", 0
    remaining = agda_remaining_holes(output)
    if remaining is not None:
        return "progress", remaining
    return "type_error", 0
