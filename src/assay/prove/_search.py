"""The loop over one obligation file: propose, filter, judge, commit, until no hole is open.

A search state is the file's text with its open holes. At each step the first open hole is
worked on: the interaction lane gives its goal and context (a question, never a verdict), the
fixed proposer (``_moves``) lists candidates, the fast-lane filter may cut those Agda objects
to at the hole, and each remaining candidate is put into the hole of a private copy
and the **whole file** is judged in batch (``assay.proofs.judge_hole``, the one hole path). The
first candidate that closes the hole (``solved``) or leaves only holes open (``progress``: the
hole closed, or sub-holes opened) is committed, and the next step starts from that text: depth
is serial. The obligation file itself is only read.

Ending: no hole open and the committed candidate's verdict green, which is what ``Proved``
demands (else ``unsolved``, with the last state); ``error`` when assay's machinery failed (a
toolchain error, a lane that stopped answering), never counted either way.

The filter changes the cost, never the verdict: it only drops candidates; the ones it keeps are
judged in the same order, so the proof found is the same whenever it never drops a candidate the
judge would accept. It drops a candidate only when the lane's check of the term against the
goal raises a parse, scope or type error at a goal with no unknowns (``_filter``: why the judge
could never accept it then). The tests check that proofs are byte-identical with and without it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from assay._errors import AssayError
from assay.proofs import (
    AgdaLane,
    Attempt,
    Goal,
    Judging,
    LaneError,
    LaneInputError,
    TermRejected,
    Terms,
    fill,
    judge_hole,
)
from assay.prove._casesplit import CaseSplitter, SplitFailed
from assay.prove._filter import askable, checkable
from assay.prove._fixture import (
    enclosing,
    holes,
    imports,
    local_lemmas,
    nameable,
    position,
    signature,
)
from assay.prove._ledger import ObligationLedger, Outcome, ProofStep, Timing, Tried
from assay.prove._moves import Lemma, Move, explicit_arity, propose
from assay.prove._retrieval import retrieve
from assay.prove._solve import Proved, Step

MAX_STEPS = 16
"""Committed moves per obligation, at most (sub-holes can keep a search going otherwise)."""


@dataclass(frozen=True)
class Settings:
    """How a run searches: its switches and where judgments run."""

    judging: Judging
    retrieval: bool = False
    exclusion: bool = True
    filter: bool = True
    case_split: bool = False
    """``--case-split``: the case-split move and its recursive shapes (``_casesplit``)."""
    library: str = ""
    """The agda-stdlib whose sources retrieval reads (the judging toolchain's)."""
    max_steps: int = MAX_STEPS
    proposer: Callable[[list[str], list[Lemma]], list[Move]] = propose
    """The fixed proposer (``_moves.propose``); the adversarial tests put a hostile one here to
    show that no candidate, whatever it is, gets a false statement claimed."""


@dataclass(frozen=True)
class Meta:
    """What the folder's manifest says about one obligation file."""

    canary: bool = False
    single_term: bool | None = None
    originals: tuple[str, ...] = ()
    lemma: str | None = None


@dataclass
class _Run:
    """The counters of one obligation's run."""

    judgments: int = 0
    proposed: int = 0
    filtered: int = 0
    refused: int = 0
    checker_ms: int = 0
    lane_ms: int = 0
    cached: int = 0
    exclusions: list[str] = field(default_factory=list)
    tried: list[Tried] = field(default_factory=list)

    def count(self, attempt: Attempt) -> Attempt:
        """Count one judgment (or a refusal by the scan), as every move's is counted."""
        verdict = attempt.verdict
        if attempt.status == "refused":
            self.refused += 1
        else:
            self.judgments += 1
        if verdict is not None:
            if verdict.cached:
                self.cached += 1
            else:
                self.checker_ms += verdict.elapsed_ms
        return attempt


def _only_a_hole(term: str) -> bool:
    """A candidate that is itself a hole (``?``, ``{! !}``) closes nothing: never progress."""
    stripped = term.strip()
    return stripped == "?" or holes(stripped) == [(0, len(stripped))]


class _Searcher:
    """One obligation's search, with its lane and its working copy."""

    def __init__(self, name: str, original: str, meta: Meta, settings: Settings, lane: AgdaLane):
        self.name = name
        self.original = original
        self.meta = meta
        self.settings = settings
        self.lane = lane
        self.run = _Run()
        self.arities: dict[str, int | None] = {}
        self.folder = tempfile.TemporaryDirectory(prefix="assay-prove-")
        self.copy = Path(self.folder.name) / name
        self.splitter = CaseSplitter() if settings.case_split else None

    def close(self) -> None:
        self.folder.cleanup()

    @contextmanager
    def _timed(self) -> Iterator[None]:
        """Count the time inside as the lane's (``Timing.lane_ms``)."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.run.lane_ms += int((time.monotonic() - start) * 1000)

    def _ask(self, what: str, *args: str | int) -> str | Goal:
        with self._timed():
            if what == "goal":
                return self.lane.goal(self.copy, int(args[0]), int(args[1]))
            return self.lane.infer(self.copy, int(args[0]), int(args[1]), str(args[2]))

    def _lemmas(self, text: str, offset: int, line: int, column: int) -> list[Lemma]:
        own = enclosing(text, offset)
        found = imports(text)
        named: list[tuple[str, str]] = []
        for imported in found:
            named += [(name, "fixture") for name in imported.names if nameable(name)]
        named += [(name, "fixture") for name in local_lemmas(text, offset, own) if nameable(name)]
        if self.settings.retrieval:
            originals = {*self.meta.originals, *([own] if own else [])}
            ranked, gone = retrieve(
                self.settings.library,
                found,
                signature(text, own) if own else "",
                originals,
                exclusion=self.settings.exclusion,
            )
            self.run.exclusions = sorted({*self.run.exclusions, *gone})
            named += [(r.qualified, "retrieved") for r in ranked]
        lemmas, seen = [], set()
        for name, source in named:
            if name in seen:
                continue
            seen.add(name)
            if name not in self.arities:
                try:
                    inferred = self._ask("infer", line, column, name)
                    self.arities[name] = explicit_arity(str(inferred))
                except TermRejected:
                    self.arities[name] = None
            lemmas.append(
                Lemma(name, "retrieved" if source == "retrieved" else "fixture", self.arities[name])
            )
        return lemmas

    def _cut(self, move: Move, goal: Goal, line: int, column: int) -> bool:
        """The fast-lane filter (``_filter``): cut only what Agda objects to at a goal with no
        unknowns, where its objection is the judge's too."""
        if not self.settings.filter or not checkable(goal) or not askable(move.term):
            return False
        with self._timed():
            return self.lane.objection(self.copy, line, column, move.term) is not None

    def _judge(self, text: str, span: tuple[int, int], term: str) -> Attempt:
        return self.run.count(
            judge_hole("agda", text, span, term, Terms(stdlib=True), self.settings.judging)
        )

    def search(self) -> tuple[str, Proved | None, str, bool]:
        """(last text, the proof or None, why not, whether the machinery failed)."""
        text = self.original
        steps: tuple[Step, ...] = ()
        last: Attempt | None = None
        for _ in range(self.settings.max_steps):
            open_holes = holes(text)
            if not open_holes:
                break
            span = open_holes[0]
            line, column = position(text, span[0])
            self.copy.write_text(text, encoding="utf-8")
            try:
                goal = self._ask("goal", line, column)
                assert isinstance(goal, Goal)
                lemmas = self._lemmas(text, span[0], line, column)
            except LaneInputError as exc:
                return text, None, f"the file does not load: {exc}", False
            except TermRejected as exc:
                return text, None, f"Agda answered the goal question with an error: {exc}", False
            names = [entry.name for entry in goal.context if entry.in_scope]
            moves = self.settings.proposer(names, lemmas)
            if self.splitter is not None:
                moves += self.splitter.extend(self, text, span, goal)
            committed = None
            for move in moves:
                self.run.proposed += 1
                if self._cut(move, goal, line, column):
                    self.run.filtered += 1
                    self._note(line, column, move, "cut")
                    continue
                attempt = self._judge(text, span, move.term)
                self._note(line, column, move, attempt.status)
                if attempt.status == "error":
                    why = "; ".join(attempt.diagnostics[-3:]) or "the judge failed"
                    return text, None, f"assay's machinery failed: {why}", True
                after = fill(text, span, move.term)
                if attempt.status == "solved" or (
                    attempt.status == "progress"
                    and attempt.remaining_holes == len(holes(after))
                    and not _only_a_hole(move.term)
                ):
                    committed, last = (after, move.term), attempt
                    break
            if committed is None and self.splitter is not None:
                try:
                    split = self.splitter.attempt(self, text, span, goal)
                except SplitFailed as exc:
                    return text, None, f"assay's machinery failed: {exc}", True
                if split is not None:
                    text, last = split[0], split[2]
                    steps = (*steps, Step(span, line, column, split[1].variable, split[1]))
                    continue
            if committed is None:
                return text, None, f"no candidate closed the hole at {line}:{column}", False
            steps = (*steps, Step(span, line, column, committed[1]))
            text = committed[0]
        if holes(text):
            return text, None, f"{len(holes(text))} hole(s) still open after the step budget", False
        if last is None or last.verdict is None:
            return text, None, "the file has no hole to fill", False
        try:
            return text, Proved(self.original, steps, text, last.verdict), "", False
        except ValueError as exc:
            return text, None, f"not proved: {exc}", False

    def _note(self, line: int, column: int, move: Move, outcome: Outcome) -> None:
        self.run.tried.append(
            Tried(line=line, column=column, term=move.term, source=move.source, outcome=outcome)
        )


def prove_text(name: str, original: str, meta: Meta, settings: Settings) -> ObligationLedger:
    """Search one obligation (``name``: the file's name, ``original``: its text) and return its
    ledger row. Never raises for what the file or a candidate does: assay's own failures are
    ``error`` rows."""
    start = time.monotonic()
    searcher: _Searcher | None = None
    proved: Proved | None = None
    text, reason, failed = original, "", False
    try:
        lane = AgdaLane(settings.judging.sandbox, stdlib=True, config=settings.judging.config)
        with lane:
            searcher = _Searcher(name, original, meta, settings, lane)
            text, proved, reason, failed = searcher.search()
    except LaneError as exc:
        reason, failed = f"the interaction lane failed: {exc}", True
    except AssayError as exc:
        reason, failed = f"{type(exc).__name__}: {exc}", True
    finally:
        if searcher is not None:
            searcher.close()
    run = searcher.run if searcher is not None else _Run()
    wall = int((time.monotonic() - start) * 1000)
    status = "error" if failed else ("solved" if proved is not None else "unsolved")
    return ObligationLedger(
        file=name,
        status=status,
        canary=meta.canary,
        single_term=meta.single_term,
        holes=len(holes(original)),
        proof=None if proved is None else _steps(proved.steps),
        last_state=None if proved is not None else text,
        reason=reason,
        judgments=run.judgments,
        proposed=run.proposed,
        filtered=run.filtered,
        refused=run.refused,
        exclusions=run.exclusions,
        tried=run.tried,
        timing=Timing(
            wall_ms=wall,
            checker_ms=run.checker_ms,
            lane_ms=run.lane_ms,
            harness_ms=max(wall - run.checker_ms - run.lane_ms, 0),
            cached=run.cached,
        ),
    )


def _steps(steps: Sequence[Step]) -> list[ProofStep]:
    return [
        ProofStep(
            line=s.line,
            column=s.column,
            term=s.term,
            clauses=None if s.split is None else list(s.split.clauses),
        )
        for s in steps
    ]
