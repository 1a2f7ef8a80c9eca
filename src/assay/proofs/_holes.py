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
from assay.proofs._languages import agda_remaining_holes
from assay.proofs._scan import agda_candidate_refusals

HoleStatus = Literal["solved", "progress", "type_error", "refused", "error"]
_HOLE = re.compile(r"\{!.*?!\}", re.DOTALL)


class HoleNotFound(InvalidInput):
    """No hole at the given position (or not exactly one hole in an obligation)."""


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise HoleNotFound(f"line {line}, column {column} is outside the file")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def hole_span(text: str, line: int, column: int) -> tuple[int, int]:
    """The (start, end) of the hole that opens at ``line``:``column``."""
    start = _offset(text, line, column)
    match = _HOLE.match(text, start)
    if match is not None:
        return match.span()
    if text.startswith("?", start) and (start == 0 or not text[start - 1].isalnum()):
        end = start + 1
        if end == len(text) or text[end] in " \t\n)":
            return start, end
    raise HoleNotFound(f"no hole ({{! !}} or ?) opens at line {line}, column {column}")


def only_hole(text: str) -> tuple[int, int]:
    """The span of the obligation's single ``{! !}`` hole."""
    holes = list(_HOLE.finditer(text))
    if len(holes) != 1:
        raise HoleNotFound(f"an obligation must have exactly one {{! !}} hole; it has {len(holes)}")
    return holes[0].span()


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

    def to_json(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "status": self.status,
            "remainingHoles": self.remaining_holes,
            "elapsedMs": self.elapsed_ms,
            "checkedFromSource": self.checked_from_source,
            "verdict": self.verdict,
            "diagnostics": self.diagnostics,
        }


def refused(candidate: str) -> list[str]:
    return agda_candidate_refusals(candidate)


def classify(exit_code: int | None, finding: str, output: str) -> tuple[HoleStatus, int]:
    """(status, remaining holes) of an Agda batch run over a filled obligation."""
    if finding == "machinery":
        return "error", 0
    if finding == "checks":
        return "solved", 0
    remaining = agda_remaining_holes(output)
    if remaining is not None:
        return "progress", remaining
    return "type_error", 0
