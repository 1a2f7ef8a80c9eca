"""The case-split move (``--case-split``): beyond term mode, still judged only by Agda.

When no term move closes a hole, the search may ask the interaction lane to split the hole's
clause on a variable of the goal's context (Agda's ``Cmd_make_case``): an answer, never a
verdict. The clauses Agda returns replace the clause holding the hole, each with its own hole,
and the **whole file** is judged in batch; the split is committed only as ``progress`` (the
batch check fails on nothing but the new holes), exactly as a term move is. Bounds, so that
judgments stay bounded and every run is comparable:

- **one split per obligation**: a definition whose clause was split is never split again
  (its new holes get term moves only);
- variables are tried **in the order the goal's context lists them** (only names in scope at
  the hole); the first split the judge accepts is committed, the others are never asked;
- the clause must be one line, ``f p₁ … pₙ = {! !}``, and every clause Agda gives back must be
  ``f q₁ … qₘ = ?`` or an absurd clause (no right-hand side): a split only refines patterns.

After a split, the term moves at its new holes gain the **recursive shapes**
(``RECURSIVE_VOCABULARY``), so an induction hypothesis can be proposed: the definition's own name
saturated with the variables in scope (``plus-suc m n``), and the same wrapped in ``cong`` with
each constructor the clause's patterns bind and the goal mentions, applied to all but its last
pattern argument (``cong suc (plus-suc m n)``, ``cong (_∷_ x) (map-id xs)``). Agda's termination
checker (``--safe``) judges whether the recursion is structural; nothing here decides it.

A solve still needs ``Proved``'s evidence: no open hole and a green batch check of the final
bytes, which ``_solve.replay`` re-derives from the original through each step (a split step is
checked again there by ``apply_split``).
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from assay.proofs import AgdaLane, Attempt, Goal, TermRejected, Terms, judge_source
from assay.prove._fixture import enclosing, holes, position
from assay.prove._ledger import Outcome
from assay.prove._moves import MAX_ARITY, MAX_SATURATIONS, Move, explicit_arity

RECURSIVE_VOCABULARY = (
    "case split (--case-split): when no term move closes a hole, split its one-line clause on a "
    "variable in scope (in the context's order, one split per definition, the first the batch "
    "check accepts with only the new holes open)",
    "recursive shapes after a split: the definition's own name saturated with the variables in "
    f"scope (every ordered choice, at most {MAX_SATURATIONS}), and each wrapped as "
    "`cong C (…)` for every constructor C the clause's patterns bind and the goal mentions "
    "(applied to all but its last pattern argument)",
)
"""What ``--case-split`` adds to the action space, as every report states it."""

HOLE = "{! !}"
_CLAUSE = re.compile(r"^(?P<lhs>[^=\n]+?)\s*=\s*(?P<rhs>.*)$")


@dataclass(frozen=True)
class Split:
    """One committed split: the variable, and the clause (its span in the text before it) that
    ``clauses`` replaced."""

    variable: str
    clause: tuple[int, int]
    clauses: tuple[str, ...]


def _one_declaration(line: str) -> bool:
    """Whether ``line`` can hold only one declaration as Agda lays it out: no ``;`` (which
    separates declarations on one line), no comment or pragma, and only printable characters
    (Agda also breaks lines at ``\r``, ``\f`` and other separators a ``\n`` search misses). A
    split replaces the whole line, so a fixity declaration sharing it would be deleted with the
    clause, and the statement above re-parsed: a false statement made true."""
    return (
        line.isprintable()
        and ";" not in line
        and not any(mark in line for mark in ("--", "{-", "-}"))
    )


def clause_span(text: str, hole: tuple[int, int]) -> tuple[int, int] | None:
    """The span of the one-line clause holding the hole (its line, without the line break), or
    None unless the clause is ``lhs = {! !}`` alone on an unindented line that holds nothing
    else (``_one_declaration``) with no indented continuation after any blank or comment lines
    (a ``where`` block would belong to it)."""
    start = text.rfind("\n", 0, hole[0]) + 1
    end = text.find("\n", hole[1])
    end = len(text) if end == -1 else end
    line = text[start:end]
    if "\n" in text[hole[0] : hole[1]] or not line or line[0].isspace():
        return None
    if not _one_declaration(line):
        return None
    match = _CLAUSE.match(line)
    if match is None or start + match.start("rhs") != hole[0] or line.rstrip()[-1:] != "}":
        return None
    if start + len(line.rstrip()) != hole[1]:
        return None
    for following in text[end + 1 :].split("\n"):
        if not following.strip() or following.lstrip().startswith("--"):
            continue  # a blank or comment line: what comes after still belongs to the clause
        if following[0].isspace() or following.startswith("{-"):
            return None
        break
    return start, end


def render(clauses: list[str], own: str) -> tuple[str, ...] | None:
    """Agda's clauses as file lines, each ``?`` a ``{! !}``; None unless every one is a clause of
    ``own`` whose right-hand side is a hole, or an absurd clause (patterns only)."""
    out = []
    for clause in clauses:
        if not _one_declaration(clause) or not clause.startswith(own + " "):
            return None
        match = _CLAUSE.match(clause)
        if match is None:
            if "()" not in clause:
                return None
            out.append(clause.rstrip())
            continue
        if match.group("rhs").strip() not in ("?", HOLE):
            return None
        out.append(f"{match.group('lhs').rstrip()} = {HOLE}")
    return tuple(out) if out else None


def apply_split(text: str, hole: tuple[int, int], own: str | None, split: Split) -> str:
    """The text with the clause holding ``hole`` replaced by the split's clauses; ValueError
    unless the clause is that hole's one-line clause of ``own`` and the clauses only refine its
    patterns (what ``render`` accepts). ``_solve.replay`` calls it for every split step."""
    span = clause_span(text, hole)
    if own is None or span != split.clause:
        raise ValueError(f"the split on {split.variable!r} does not replace the hole's clause")
    if render(list(split.clauses), own) != split.clauses:
        raise ValueError(f"the split on {split.variable!r} is not clauses of {own!r}")
    return text[: span[0]] + "\n".join(split.clauses) + text[span[1] :]


def _pattern_groups(lhs: str) -> list[list[str]]:
    """The parenthesised patterns of a clause's left-hand side, each as its tokens."""
    groups, depth, current = [], 0, ""
    for char in lhs:
        if char == "(":
            depth += 1
            if depth == 1:
                current = ""
                continue
        elif char == ")":
            depth -= 1
            if depth == 0:
                groups.append(current.split())
                continue
        if depth >= 1:
            current += char
    return [g for g in groups if g and not any(("(" in t or ")" in t) for t in g)]


def wrappers(clause_line: str, variables: list[str], goal: str) -> list[tuple[str, str]]:
    """(constructor name, its partial application) for each constructor the clause's patterns
    bind and ``goal`` mentions: ``(suc m)`` gives ("suc", "suc"), ``(x ∷ xs)`` ("∷", "_∷_ x")."""
    match = _CLAUSE.match(clause_line)
    if match is None:
        return []
    out = []
    goal_words = set(goal.replace("(", " ").replace(")", " ").split())
    for group in _pattern_groups(match.group("lhs")):
        names = [t for t in group if t not in variables]
        if len(names) != 1:
            continue
        name, args = names[0], [t for t in group if t in variables]
        if not args or name not in goal_words:
            continue
        at = group.index(name)
        head = name if at == 0 else f"_{name}_" if at < len(group) - 1 else f"_{name}"
        applied = " ".join([head, *args[:-1]])
        wrapper = applied if len(args) == 1 else f"({applied})"
        if (name, wrapper) not in out:
            out.append((name, wrapper))
    return out


def recursive_moves(
    own: str, arity: int | None, variables: list[str], wrapped: list[str]
) -> list[Move]:
    """The recursive shapes (``RECURSIVE_VOCABULARY``): ``own`` saturated with ``variables``,
    then each saturation inside ``cong W (…)`` for each wrapper ``W``."""
    if not arity or arity > MAX_ARITY or not variables:
        return []
    choices = itertools.islice(itertools.product(variables, repeat=arity), MAX_SATURATIONS)
    calls = [" ".join([own, *choice]) for choice in choices]
    moves = [Move(call, "recursive") for call in calls]
    moves += [Move(f"cong {w} ({call})", "recursive") for w in wrapped for call in calls]
    return moves


class Host(Protocol):
    """What the split needs of the search (``_search._Searcher``): its lane and working copy,
    its counters, its questions and its ledger notes."""

    lane: AgdaLane
    copy: Path
    settings: Any
    run: Any

    def _ask(self, what: str, *args: str | int) -> str | Goal: ...

    def _note(self, line: int, column: int, move: Move, outcome: Outcome) -> None: ...


class CaseSplitter:
    """The move's state over one obligation file: which definitions were split already."""

    def __init__(self) -> None:
        self.split: set[str] = set()

    def extend(self, host: Host, text: str, span: tuple[int, int], goal: Goal) -> list[Move]:
        """The recursive shapes at a hole of a split definition (none elsewhere)."""
        own = enclosing(text, span[0])
        clause = clause_span(text, span)
        if own is None or own not in self.split or clause is None:
            return []
        line, column = position(text, span[0])
        try:
            arity = explicit_arity(str(host._ask("infer", line, column, own)))
        except TermRejected:
            return []
        names = [entry.name for entry in goal.context if entry.in_scope]
        wrapped = [w for _, w in wrappers(text[clause[0] : clause[1]], names, goal.type)]
        return recursive_moves(own, arity, names, wrapped)

    def attempt(
        self, host: Host, text: str, span: tuple[int, int], goal: Goal
    ) -> tuple[str, Split, Attempt] | None:
        """Split the hole's clause on the first variable (in the context's order) whose split
        the batch check accepts with only the new holes open; None when none does, the
        definition was split before, or the clause is not one line. Every split asked is in
        the ledger (``tried``: source ``split``, the variable as its term, the clauses)."""
        own = enclosing(text, span[0])
        clause = clause_span(text, span)
        if own is None or own in self.split or clause is None:
            return None
        self.split.add(own)  # one split per definition, whether or not one is accepted
        line, column = position(text, span[0])
        for entry in goal.context:
            if not entry.in_scope:
                continue
            move = Move(entry.name, "split")
            start = time.monotonic()
            try:
                answer = host.lane.make_case(host.copy, line, column, entry.name)
            except TermRejected:
                host._note(line, column, move, "refused")
                continue
            finally:
                host.run.lane_ms += int((time.monotonic() - start) * 1000)
            clauses = render(answer, own)
            if clauses is None:
                host._note(line, column, move, "refused")
                continue
            split = Split(entry.name, clause, clauses)
            after = apply_split(text, span, own, split)
            judged = _judge(host, after)
            host._note(line, column, move, judged.status)
            host.run.tried[-1] = host.run.tried[-1].model_copy(update={"clauses": list(clauses)})
            if judged.status == "error":
                raise SplitFailed(judged)
            if judged.status == "progress" and judged.remaining_holes == len(holes(after)):
                return after, split, judged
        return None


class SplitFailed(Exception):
    """The batch judge failed on a split (assay's machinery, not the split)."""

    def __init__(self, attempt: Attempt) -> None:
        super().__init__("; ".join(attempt.diagnostics[-3:]) or "the judge failed")
        self.attempt = attempt


def _judge(host: Host, text: str) -> Attempt:
    """Judge the whole split file in batch, counted as every judgment is."""
    attempt = judge_source("agda", text, Terms(stdlib=True), host.settings.judging)
    host.run.count(attempt)
    return attempt
