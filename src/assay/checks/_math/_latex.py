"""Finding the answer to compare inside a model's text: the last ``\\boxed{...}``, the whole
text, or the last number."""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


class ExtractProblem(ValueError):
    """The answer has no usable part to compare (no box, unbalanced braces, two boxes)."""


def _closing(text: str, start: int) -> int:
    """Index of the ``}`` closing the group whose content starts at ``start``; -1 if none.
    Escaped braces (``\\{``, ``\\}``) are content, not structure."""
    depth = 1
    at = start
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return -1


def boxed(text: str) -> list[str]:
    """The contents of every top-level ``\\boxed{...}`` / ``\\fbox{...}``, in order.

    Raises ExtractProblem for a box whose braces never close (a truncated answer)."""
    found = []
    position = 0
    while (match := _BOX.search(text, position)) is not None:
        end = _closing(text, match.end())
        if end < 0:
            raise ExtractProblem("the \\boxed{...} answer is not closed: its braces do not balance")
        found.append(text[match.end() : end])
        position = end + 1
    return found


def last_boxed(text: str) -> str | None:
    """The one boxed answer, or None when there is none.

    Several boxes holding different answers are a hedge, refused (ExtractProblem); the same
    answer boxed twice is one answer."""
    boxes = boxed(text)
    if not boxes:
        return None
    distinct = {" ".join(b.split()) for b in boxes}
    if len(distinct) > 1:
        raise ExtractProblem(
            f"the answer boxes {len(distinct)} different answers: box exactly one final answer"
        )
    return boxes[-1]


def strip_delimiters(text: str) -> str:
    """The text without surrounding math delimiters (``$...$``, ``\\[...\\]``) and without a
    sentence's final period."""
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for left, right in _DELIMITERS:
            if (
                len(text) >= len(left) + len(right)
                and text.startswith(left)
                and text.endswith(right)
            ):
                text = text[len(left) : len(text) - len(right)].strip()
                changed = True
        if text.endswith(".") and not text.endswith(".."):  # "5." ends a sentence; "..." stays
            text = text[:-1].rstrip()
            changed = True
    return text
