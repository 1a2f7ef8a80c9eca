"""The fixed proposer: a deterministic move vocabulary, written down and reported with every score.

The vocabulary (``VOCABULARY``, in the order candidates are proposed at a hole):

1. the closers ``refl`` and ``tt``;
2. the goal context's assumptions, by name, in the order Agda lists them;
3. each lemma the fixture can name (the names it imports by name, its own earlier top-level
   lemmas, and, with retrieval, the retrieved rows), in three shapes: bare (``+-comm``), applied
   to underscores (``+-comm _ _``, one per explicit argument) and saturated with the variables in
   scope at the goal (``+-comm m n``, every ordered choice, at most ``MAX_SATURATIONS``).

Nothing in it can emit a ``let``, a lambda, a pragma or a hole: every candidate is a name or a
name applied to names and underscores. The proposer is not learned and not tuned: every number a
run reports is about the loop and the judge, with the action space stated beside it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

MoveSource = Literal["closer", "context", "fixture", "retrieved", "recursive", "split"]
CLOSERS = ("refl", "tt")
MAX_ARITY = 4
MAX_SATURATIONS = 16
VOCABULARY = (
    "closers: refl, tt",
    "context: each assumption at the goal, by name",
    "lemmas the fixture names (imported by name, its own earlier lemmas; with retrieval, the "
    "retrieved rows), each bare, applied to one underscore per explicit argument, and saturated "
    f"with the variables in scope (every ordered choice, at most {MAX_SATURATIONS} per lemma)",
)
"""The action space, as every report states it."""


@dataclass(frozen=True)
class Move:
    """One candidate term and where it came from."""

    term: str
    source: MoveSource


@dataclass(frozen=True)
class Lemma:
    """A name the proposer may use, how it is written at the hole, and its explicit arity (None:
    its type could not be read, so only the bare shape is proposed)."""

    name: str
    source: MoveSource
    arity: int | None


def explicit_arity(type_text: str) -> int | None:
    """How many explicit arguments a type as Agda prints it takes before its final codomain
    (``(m n : ℕ) → m + n ≡ n + m``: 2; ``{n : ℕ} → n ≤ n``: 0), or None when unreadable."""
    segments = _top_level_arrows(type_text)
    if segments is None:
        return None
    count = 0
    for segment in segments[:-1]:
        count += _explicit_binders(segment.strip())
    return min(count, MAX_ARITY + 1)


def _top_level_arrows(text: str) -> list[str] | None:
    depth = 0
    parts: list[str] = []
    current: list[str] = []
    for char in text:
        if char in "({⦃":
            depth += 1
        elif char in ")}⦄":
            depth -= 1
            if depth < 0:
                return None
        if char == "→" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return None if depth else parts


def _explicit_binders(segment: str) -> int:
    """Explicit arguments one segment before an arrow binds: ``(x y : A)`` groups count their
    names, ``{...}`` none, ``∀ x y`` its names, and a plain type one."""
    if segment.startswith("∀"):
        body = segment[1:].strip()
        return _groups(body) if body[:1] in "({⦃" else len(body.split())
    if segment[:1] in "({⦃":
        return _groups(segment)
    return 1


def _groups(text: str) -> int:
    count, depth, start = 0, 0, 0
    for index, char in enumerate(text):
        if char in "({⦃":
            if depth == 0:
                start = index
            depth += 1
        elif char in ")}⦄":
            depth -= 1
            if depth == 0 and text[start] == "(":
                inner = text[start + 1 : index]
                names = inner.split(" : ", 1)[0] if " : " in inner else ""
                count += len(names.split()) if names else 1
    return count


def shapes(lemma: Lemma, variables: list[str]) -> list[str]:
    """The lemma's three shapes: bare, applied to underscores, saturated with ``variables``."""
    out = [lemma.name]
    if not lemma.arity or lemma.arity > MAX_ARITY:
        return out
    out.append(" ".join([lemma.name, *["_"] * lemma.arity]))
    choices = itertools.islice(itertools.product(variables, repeat=lemma.arity), MAX_SATURATIONS)
    out += [" ".join([lemma.name, *choice]) for choice in choices]
    return list(dict.fromkeys(out))


def propose(context: list[str], lemmas: list[Lemma]) -> list[Move]:
    """Every candidate at one hole, in the vocabulary's order, each term once (first source wins).

    ``context``: the names in scope at the goal, as the interaction lane lists them."""
    moves = [Move(term, "closer") for term in CLOSERS]
    moves += [Move(name, "context") for name in context]
    for lemma in lemmas:
        moves += [Move(term, lemma.source) for term in shapes(lemma, context)]
    seen: set[str] = set()
    unique = []
    for move in moves:
        if move.term not in seen:
            seen.add(move.term)
            unique.append(move)
    return unique
