"""The case-split move (``--case-split``): beyond term mode, still judged only by Agda.

When no term move closes a hole, the search may ask the interaction lane to split the hole's
clause on a variable of the goal's context (Agda's ``Cmd_make_case``): an answer, never a
verdict. The clauses Agda returns replace the clause holding the hole, each with its own hole,
and the **whole file** is judged in batch; the split is committed as ``progress`` (the batch
check fails on nothing but the new holes), exactly as a term move is, or, when every clause is
absurd and no hole is left, only on a green batch check (``solved``), after which the search
still claims the solve only through ``Proved``. Bounds, so that judgments stay bounded and every
run is comparable:

- **one split per obligation**: a definition whose clause was split is never split again
  (its new holes get term moves only);
- variables are tried **in the order the goal's context lists them** (only names in scope at
  the hole); the first split the judge accepts is committed, the others are never asked;
- the clause must be one line, ``f p₁ … pₙ = {! !}`` (or a mixfix ``p₁ ! p₂ = {! !}``: the
  definition is the one a signature above names, ``_fixture.enclosing``; a clause it cannot
  read is split never), and every clause Agda gives back must read as a clause of the same
  definition, ``… = ?`` or without a right-hand side (whether that is a valid absurd clause is
  the batch check's call): a split only refines patterns.

After a split, the term moves at its new holes gain the **recursive shapes**
(``RECURSIVE_VOCABULARY``), so an induction hypothesis can be proposed: the definition's own name
saturated with the variables in scope (``plus-suc m n``), and the same wrapped in ``cong`` with
each constructor the clause's patterns bind and the goal mentions, applied to all but its last
pattern argument (``cong suc (plus-suc m n)``, ``cong (_∷_ x) (map-id xs)``), then wrapped in
``cong H`` for the head ``H`` both sides of the goal share, each side ``H`` applied to one
argument (``suc (length (xs ++ ys)) ≡ suc (length xs + length ys)``: ``cong suc (length-app xs
ys)``, a constructor no list pattern binds). Agda's termination checker (``--safe``) judges
whether the recursion is structural; nothing here decides it.

A solve still needs ``Proved``'s evidence: no open hole and a green batch check of the final
bytes, which ``_solve.replay`` re-derives from the original through each step (a split step is
checked again there by ``apply_split``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from assay.proofs import AgdaLane, Attempt, Goal, TermRejected, Terms, judge_source
from assay.prove._fixture import (
    clause_of,
    declaration_end,
    definitions,
    enclosing,
    fields_only,
    holes,
    operator_arguments,
    position,
    read_clause,
)
from assay.prove._ledger import Outcome
from assay.prove._moves import MAX_ARITY, MAX_SATURATIONS, Move, explicit_arity

RECURSIVE_VOCABULARY = (
    "case split (--case-split): when no term move closes a hole, split its one-line clause on a "
    "variable in scope (in the context's order, one split per definition, the first the batch "
    "check accepts with only the new holes open)",
    "recursive shapes after a split: the definition's own name saturated with the variables in "
    f"scope (every ordered choice, at most {MAX_SATURATIONS}), and each wrapped as "
    "`cong C (…)` for every constructor C the clause's patterns bind and the goal mentions "
    "(applied to all but its last pattern argument), then as `cong H (…)` for the head H both "
    "sides of the goal share when each is H applied to one argument (`suc a ≡ suc b`)",
)
"""What ``--case-split`` adds to the action space, as every report states it."""

HOLE = "{! !}"


@dataclass(frozen=True)
class Split:
    """One committed split: the variable, and the clause (its span in the text before it) that
    ``clauses`` replaced."""

    variable: str
    clause: tuple[int, int]
    clauses: tuple[str, ...]


def _one_declaration(line: str) -> bool:
    """Whether ``line`` can hold only one declaration as Agda lays it out: no ``;`` but between
    a record pattern's fields (``fields_only``; anywhere else it separates declarations on one
    line), no comment or pragma, and only printable characters (Agda also breaks lines at
    ``\r``, ``\f`` and other separators a ``\n`` search misses). A split replaces the whole
    line, so a fixity declaration sharing it would be deleted with the clause, and the
    statement above re-parsed: a false statement made true."""
    return (
        line.isprintable()
        and fields_only(line)
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
    clause = read_clause(line)
    if clause is None or clause.rhs is None or start + clause.rhs != hole[0]:
        return None
    if start + len(line.rstrip()) != hole[1]:
        return None
    for following in text[end + 1 :].split("\n"):
        if not following.strip() or following.lstrip().startswith("--"):
            continue  # a blank or comment line: what comes after still belongs to the clause
        if following[0].isspace() or following.startswith("{-"):
            return None
        break
    if declaration_end(text, start) != hole[1]:
        return None  # Agda's layout gives the clause more (a block after a comment a \f ends)
    return start, end


def render(clauses: list[str], own: str, declared: Collection[str] = ()) -> tuple[str, ...] | None:
    """Agda's clauses as file lines, each ``?`` a ``{! !}``; None unless every one is one
    declaration (``_one_declaration``) that reads as a clause of ``own`` (``clause_of`` among
    ``own`` and the file's other ``declared`` definitions: ``m ! suc n`` is ``_!_``'s) whose
    right-hand side is a hole, or has no right-hand side. Whether a clause without one is a
    valid absurd clause (``noconf ()``, ``noconf {()}``, ``f m ()``) is not read here: Agda's
    batch check of the whole file judges it, as it judges everything else."""
    out = []
    names = {own, *declared}
    for clause in clauses:
        read = read_clause(clause) if _one_declaration(clause) else None
        if read is None or clause_of(read.atoms, names) != own:
            return None
        if read.equals is None or read.rhs is None:
            out.append(clause.rstrip())
            continue
        if clause[read.rhs :].strip() not in ("?", HOLE):
            return None
        out.append(f"{clause[: read.equals].rstrip()} = {HOLE}")
    return tuple(out) if out else None


def apply_split(text: str, hole: tuple[int, int], own: str | None, split: Split) -> str:
    """The text with the clause holding ``hole`` replaced by the split's clauses; ValueError
    unless the clause is that hole's one-line clause of ``own`` and the clauses only refine its
    patterns (what ``render`` accepts). ``_solve.replay`` calls it for every split step."""
    span = clause_span(text, hole)
    if own is None or span != split.clause:
        raise ValueError(f"the split on {split.variable!r} does not replace the hole's clause")
    if render(list(split.clauses), own, definitions(text, span[0])) != split.clauses:
        raise ValueError(f"the split on {split.variable!r} is not clauses of {own!r}")
    return text[: span[0]] + "\n".join(split.clauses) + text[span[1] :]


def _pattern_groups(atoms: tuple[str, ...], own: str | None) -> list[list[str]]:
    """The constructor patterns of a clause's left-hand side, each as its words: every
    parenthesised pattern with no bracket inside (``(suc m)``, ``(x ∷ xs)``), and for a mixfix
    ``own`` every argument of more than one word (``m ! suc n``: ``suc n``)."""
    groups = [
        atom[1:-1].split()
        for atom in atoms
        if atom.startswith("(") and not any(c in atom[1:-1] for c in "(){}⦃⦄")
    ]
    arguments = operator_arguments(own, atoms) if own and "_" in own else None
    for argument in arguments or []:
        if len(argument) > 1 and not any(c in word for word in argument for c in "(){}⦃⦄"):
            groups.append(list(argument))
    return [group for group in groups if group]


def wrappers(
    clause_line: str, variables: list[str], goal: str, own: str | None = None
) -> list[tuple[str, str]]:
    """(constructor name, its partial application) for each constructor the clause's patterns
    bind and ``goal`` mentions: ``(suc m)`` gives ("suc", "suc"), ``(x ∷ xs)`` ("∷", "_∷_ x"),
    and in ``own``'s mixfix clause ``m ! suc n`` the argument ``suc n`` gives ("suc", "suc")."""
    clause = read_clause(clause_line)
    if clause is None:
        return []
    out = []
    goal_words = set(goal.replace("(", " ").replace(")", " ").split())
    for group in _pattern_groups(clause.atoms, own):
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


def common_head(goal: str) -> str | None:
    """The head both sides of an equation goal share when each is that head applied to exactly
    one argument (``suc (length xs) ≡ suc (length ys)``: ``suc``), the congruence ``cong H``
    closes given the argument's equation; None for any other goal, or one this reader cannot
    read (a second ``≡``, brackets or binders it does not split)."""
    sides = " ".join(goal.split()).split(" ≡ ")  # Agda lays a long goal out over lines
    if len(sides) != 2:
        return None
    left, right = (read_clause(side.strip()) for side in sides)
    if left is None or right is None or left.equals is not None or right.equals is not None:
        return None
    if len(left.atoms) != 2 or len(right.atoms) != 2 or left.atoms[0] != right.atoms[0]:
        return None
    head = left.atoms[0]
    return None if head[0] in "({⦃" or "_" in head else head


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
        wrapped = [w for _, w in wrappers(text[clause[0] : clause[1]], names, goal.type, own)]
        head = common_head(goal.type)
        if head is not None and head not in wrapped:
            wrapped.append(head)
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
            clauses = render(answer, own, definitions(text, clause[0]))
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
            if _accepted(judged, after):
                return after, split, judged
        return None


class SplitFailed(Exception):
    """The batch judge failed on a split (assay's machinery, not the split)."""

    def __init__(self, attempt: Attempt) -> None:
        super().__init__("; ".join(attempt.diagnostics[-3:]) or "the judge failed")
        self.attempt = attempt


def _accepted(judged: Attempt, after: str) -> bool:
    """A split is committed when the batch check fails on nothing but the new holes
    (``progress``), or when it leaves no hole and the check is green (``solved``: every clause
    absurd, ``noconf ()``). Committing is not claiming: the search still claims a solve only
    through ``Proved``, which replays the split and demands the green verdict of the final
    bytes."""
    left = len(holes(after))
    if judged.status == "solved":
        return left == 0
    return judged.status == "progress" and judged.remaining_holes == left > 0


def _judge(host: Host, text: str) -> Attempt:
    """Judge the whole split file in batch, counted as every judgment is."""
    attempt = judge_source("agda", text, Terms(stdlib=True), host.settings.judging)
    host.run.count(attempt)
    return attempt
