"""The ledger of a run: per obligation, what was spent, proposed, cut, refused and excluded.

Everything but ``timing`` is a function of the inputs and the toolchain: the same folder, flags
and toolchain give the same bytes (``to_json`` with the ``timing`` fields dropped). Timings,
cache hits and the number of parallel jobs live only in ``timing`` fields, so a gamed run and a
fair run are told apart from the deterministic part alone.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay._wire import WireModel

ObligationStatus = Literal["solved", "unsolved", "error"]
Outcome = Literal["cut", "refused", "type_error", "progress", "solved", "limit", "error"]


class Tried(WireModel):
    """One candidate at one hole and what became of it (``cut``: dropped by the fast-lane filter
    before any judgment)."""

    line: int
    column: int
    term: str
    source: str
    """closer, context, fixture, retrieved, recursive or split (``term``: the variable)."""
    outcome: Outcome
    clauses: list[str] | None = None
    """For a case split Agda answered: the clauses it made of the hole's clause."""


class ProofStep(WireModel):
    """One committed candidate: the hole (where it opened in the text before it) and the term."""

    line: int
    column: int
    term: str
    clauses: list[str] | None = None
    """For a case split (``--case-split``): the clauses that replaced the hole's clause, and
    ``term`` is the variable split on."""


class Timing(WireModel):
    """Wall time, split into the checker's own time and the harness's; never compared across runs."""

    wall_ms: int
    checker_ms: int
    """Inside batch judgments (the toolchain processes, as the judge timed them)."""
    lane_ms: int
    """Questions to the interaction lane (loads included)."""
    harness_ms: int
    """Everything else: proposing, ranking, staging, bookkeeping."""
    cached: int
    """Judgments served from the judgment cache (depends on earlier runs)."""


class ObligationLedger(WireModel):
    """One obligation file's run."""

    file: str
    status: ObligationStatus
    """``solved`` only with the evidence (``Proved``); ``error`` when assay's machinery failed
    (never counted as solved or unsolved)."""
    canary: bool = False
    """A false statement: it must never be solved."""
    single_term: bool | None = None
    """Whether the intended solution is one term of the fixed vocabulary from the fixture's
    imports (the action space's ceiling), from the folder's manifest; None when not stated."""
    holes: int
    """Open holes in the file as given (its obligations)."""
    proof: list[ProofStep] | None = None
    """The committed candidates, in order, when solved."""
    last_state: str | None = None
    """The file as far as the search got, when not solved."""
    reason: str = ""
    judgments: int = 0
    """Batch judgments requested (each a whole-file check; a cache hit counts too)."""
    proposed: int = 0
    filtered: int = 0
    """Candidates cut by the fast-lane filter (no judgment spent)."""
    refused: int = 0
    """Candidates refused before judging (a shape assay never runs)."""
    exclusions: list[str] = Field(default_factory=list)
    """Each retrieval row excluded as the obligation's own original, by qualified name."""
    tried: list[Tried] = Field(default_factory=list)
    timing: Timing


class Controls(WireModel):
    """The run's switches and its totals (one denominator for every sweep)."""

    retrieval: bool
    exclusion: bool
    filter: bool
    case_split: bool = False
    """``--case-split``: the case-split move and the recursive shapes were in the action space."""
    judgments: int
    filtered: int
    recall: dict[str, float | int | None] | None = None
    """With retrieval: the offline recall instrument (``recall_at_8``, ``median_rank``, ``n``)."""


class ProveReport(WireModel):
    """``assay prove``: the score with its action space beside it."""

    schema_: Literal["assay.prove/1"] = Field("assay.prove/1", alias="schema")
    action_space: list[str]
    toolchain: dict[str, str]
    """The Agda that judged: binary, version, library identity."""
    solved: int
    total: int
    """Obligations that are not canaries (errors included: the one denominator)."""
    ceiling: int | None
    """Obligations whose intended solution is one term from the fixture's imports (manifest)."""
    errors: int
    canaries: int
    canaries_solved: int
    obligations: list[ObligationLedger]
    controls: Controls
    timing: dict[str, int]
    """Wall time of the whole run and the parallel jobs (not part of the reproducible bytes)."""

    def reproducible(self) -> dict[str, object]:
        """The report without its timing fields: byte-identical across runs of the same inputs."""
        data = self.to_json()
        data.pop("timing")
        for row in data["obligations"]:
            row.pop("timing")
        return data
