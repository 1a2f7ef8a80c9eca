"""What a search may claim: ``Proved`` has one constructor, and it demands the evidence.

A proof is claimed only through ``Proved``: its constructor refuses (``ValueError``) unless the
final file has **no open hole** (an empty obligation set) **and** the verdict given with it is a
green batch check of exactly that file (the verdict's checked bytes are the final text's), and
unless the text grew from the original only by putting candidates into holes, one step at a
time, or (``--case-split``) by replacing a hole's one-line clause with clauses of the same
definition whose right-hand sides are holes or absent (absurd clauses; ``_casesplit.apply_split``:
the signature and every other line stay the original's; coverage, absurdity and termination are
Agda's to judge). So a lemma with two holes is never counted proved when one of them closes, a
split into absurd clauses is a solve only with the green check of the file it leaves, and no
claim can be assembled from a hopeful state or from someone else's verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from assay.proofs import Verdict, fill
from assay.prove._casesplit import Split, apply_split
from assay.prove._fixture import enclosing, holes


@dataclass(frozen=True)
class Step:
    """One committed move: the candidate put into the hole at ``span`` of the text before it."""

    span: tuple[int, int]
    line: int
    column: int
    term: str
    split: Split | None = None
    """A case split (``--case-split``): the hole's clause replaced by clauses of the same
    definition that only refine its patterns (``term`` is then the variable)."""


def replay(original: str, steps: tuple[Step, ...]) -> str:
    """The text the steps make of ``original``; ValueError unless each step fills a hole of the
    text before it (the statement and everything outside the holes stay the original's)."""
    text = original
    for step in steps:
        if step.span not in holes(text):
            raise ValueError(f"step {step.term!r} does not fill a hole of the text before it")
        if step.split is not None:
            text = apply_split(text, step.span, enclosing(text, step.span[0]), step.split)
            continue
        text = fill(text, step.span, step.term)
    return text


class Proved:
    """A proved obligation: the one way a search claims a solve (see the module's docstring)."""

    __slots__ = ("original", "steps", "text", "verdict")

    def __init__(self, original: str, steps: tuple[Step, ...], text: str, verdict: Verdict) -> None:
        if replay(original, steps) != text:
            raise ValueError("the final text is not the original with its holes filled")
        if holes(text):
            raise ValueError(f"{len(holes(text))} obligation(s) still open: not proved")
        if not (verdict.green and verdict.finding == "checks" and verdict.exit_code == 0):
            raise ValueError("the final batch check is not green: not proved")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest not in verdict.files.values():
            raise ValueError("the green verdict is not a check of the final text")
        self.original = original
        self.steps = steps
        self.text = text
        self.verdict = verdict
