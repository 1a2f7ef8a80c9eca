"""Evaluating a submission's stages: the checks of a sandbox stage against the laid-out
submission; at a review or external stage the run waits (``run.awaiting``) until reviewers or
an outside party conclude it.

A run stops at the first stage that does not pass. A checker the ledger marks revoked, or a
program checker that has not reproduced its conformance fixtures, can never make a stage
verified here: its outcome is kept, its pass is not counted, and the stage says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._signed import canonical_digest
from assay._version import __version__
from assay.checks import Check, CheckContext, build_check
from assay.platform._contract import Contract, ExternalStage, ReviewStage, SandboxStage, head
from assay.platform._records import AwaitingRecord, CheckRecord, StageRecord, built
from assay.platform._revision import Revision
from assay.review import protocol_problems
from assay.status import Outcome, Status, combine

REVIEW_UNUSABLE = (
    "this review stage's protocol is not a valid protocol for this version of assay ({}): no "
    "seat can open, so this stage cannot conclude"
)
RECORD_ONLY = "this revision pins no contract: the work is recorded and never called verified"


@dataclass
class Inputs:
    """Everything one run reads: the contract and revision, and the laid-out submission."""

    run: str
    contract: Contract
    revision: Revision
    references: Path
    """A folder holding each reference as ``{key}`` (verifier-side)."""
    workspace: Path | None
    """A folder holding each artifact as ``{role}``; None when the contract has no roles."""
    summary: str | None
    artifacts: Mapping[str, str]
    """Role -> sha256 of what the run examines."""
    config: Config
    clock: Callable[[], datetime]
    conformed: set[str] = field(default_factory=set)
    """``conformance_key``s of program checks whose checker reproduced its fixtures, run as
    that check, when the revision was published."""
    revoked: Mapping[str, str] = field(default_factory=dict)
    """Checker id -> why it was revoked."""
    withdrawn: set[str] = field(default_factory=set)
    """Roles whose bytes are gone: stages cannot be evaluated again."""


@dataclass
class Progress:
    """The stages concluded so far, and where the run waits (None when it did not stop there)."""

    stages: list[StageRecord]
    awaiting: AwaitingRecord | None = None
    record_only: bool = False
    """The revision pins no contract: nothing is evaluated and nothing is ever verified."""
    of: int = 0
    """How many stages the contract has (a resumed run concluded some of them earlier)."""

    @property
    def final(self) -> tuple[Status, str] | None:
        """The run's status and detail once it is over (None while it waits)."""
        if self.awaiting is not None:
            return None
        if self.record_only:
            return Status.INCONCLUSIVE, RECORD_ONLY
        for stage in self.stages:
            if stage.status is not Status.VERIFIED:
                return stage.status, f"stage {stage.name!r}: {stage.detail}"
        return Status.VERIFIED, f"all {self.of} stages passed"


def built_checks(stage: SandboxStage) -> list[Check]:
    """The stage's checks, built once per stage object (contracts are immutable, and the
    platform keeps each parsed contract)."""
    built = _BUILT.get(id(stage))
    if built is None or built[0] is not stage:
        built = (stage, [build_check(c) for c in stage.checks])
        _BUILT[id(stage)] = built
        if len(_BUILT) > 4096:
            _BUILT.pop(next(iter(_BUILT)))
    return built[1]


_BUILT: dict[int, tuple[SandboxStage, list[Check]]] = {}
"""Stage id -> (the stage, its built checks); the stage is kept, so its id is not reused."""


def checker_id(check: Check, revision: Revision) -> str:
    """What produced an outcome: a program by the sha256 of its files, a kind by assay's version."""
    if check.kind.name == "program":
        named = getattr(check.spec, "checker", None)
        binding = revision.references.get(head(named)) if isinstance(named, str) else None
        if binding is not None:
            return f"program:{binding.sha256}"
    return f"assay:{check.kind.name}@{__version__}"


def evaluate(inputs: Inputs, start: int = 0) -> Progress:
    """Run the contract's stages from ``start`` in order, stopping at the first that does not
    pass or that waits for something outside assay."""
    progress = Progress(stages=[], of=len(inputs.contract.stages))
    for stage in inputs.contract.stages[start:]:
        began = inputs.clock()
        if isinstance(stage, ExternalStage):
            progress.awaiting = AwaitingRecord(
                run=inputs.run, stage=stage.name, awaits=awaits(stage)
            )
            return progress
        if isinstance(stage, ReviewStage):
            problems = protocol_problems(stage.protocol, "protocol")
            if not problems:
                progress.awaiting = AwaitingRecord(
                    run=inputs.run,
                    stage=stage.name,
                    awaits="reviewers under the stage's protocol (assay review seats)",
                    type="review",
                )
                return progress
            record = StageRecord(
                run=inputs.run,
                name=stage.name,
                type="review",
                status=Status.INCONCLUSIVE,
                detail=REVIEW_UNUSABLE.format(problems[0]),
                mechanism="review",
                started=began,
                finished=inputs.clock(),
            )
        else:
            record = sandbox_stage(stage, inputs, began)
        progress.stages.append(record)
        if record.status is not Status.VERIFIED:
            return progress
    return progress


def awaits(stage: ExternalStage) -> str:
    """What a run waiting at ``stage`` needs, in words."""
    if stage.mechanism == "party":
        return f"a conclusion recorded by {stage.party!r} (assay external record)"
    return "evidence meeting the stage's JSON Schema (assay external record --evidence FILE)"


def sandbox_stage(stage: SandboxStage, inputs: Inputs, began: datetime) -> StageRecord:
    """The stage's checks against the laid-out submission, gated by conformance and revocation."""
    checks = built_checks(stage)
    read_inputs = {f"artifact:{role}": sha for role, sha in sorted(inputs.artifacts.items())}
    if inputs.withdrawn:
        roles = ", ".join(sorted(inputs.withdrawn))
        return StageRecord(
            run=inputs.run,
            name=stage.name,
            type="sandbox",
            status=Status.INCONCLUSIVE,
            detail=f"artifact {roles} was withdrawn: its bytes are gone, so this stage cannot "
            "be evaluated again (earlier runs keep what they found)",
            mechanism="checks",
            inputs=read_inputs,
            started=began,
            finished=inputs.clock(),
        )
    ctx = CheckContext(
        answer=inputs.summary,
        workspace=inputs.workspace,
        base_dir=inputs.references,
        config=inputs.config,
    )
    outcomes: list[Outcome] = []
    records: list[CheckRecord] = []
    checkers: list[str] = []
    for check, raw, (who, references, sealed) in zip(
        checks, stage.checks, _reads(stage, checks, inputs.revision), strict=True
    ):
        escape = _escape(check, inputs.references)
        outcome = escape or gate(check.run(ctx), who, inputs, raw)
        read_inputs.update(references)
        outcomes.append(outcome)
        records.append(
            built(  # an Outcome (validated when the check built it) and the revision's keys
                CheckRecord,
                kind=check.kind.name,
                status=outcome.status,
                detail=outcome.detail,
                checker=who,
                evidence=outcome.evidence,
                reads_sealed=list(sealed),
            )
        )
        if who not in checkers:
            checkers.append(who)
    report = combine(outcomes, stage.mode, [c.spec.weight for c in checks])
    return built(
        StageRecord,
        run=inputs.run,
        name=stage.name,
        type="sandbox",
        status=report.status,
        detail=stage_detail(records, report.status),
        mechanism="checks",
        checkers=checkers,
        isolation=_isolation(outcomes),
        checks=records,
        inputs=read_inputs,
        started=began,
        finished=inputs.clock(),
    )


_Reads = list[tuple[str, list[tuple[str, str]], list[str]]]
"""Per check: its checker id, the ``reference:KEY`` inputs it reads with their sha256, and the
sealed keys among them."""


def _reads(stage: SandboxStage, checks: list[Check], revision: Revision) -> _Reads:
    """What each check of ``stage`` is and reads under ``revision``: fixed by the two (both
    immutable), so worked out once per pair, not once per run."""
    key = (id(stage), id(revision))
    found = _READS.get(key)
    if found is not None and found[0] is stage and found[1] is revision:
        return found[2]
    reads: _Reads = []
    for check in checks:
        keys = sorted({head(v) for v in check.spec.verifier_files()})
        references = [
            (f"reference:{k}", binding.sha256)
            for k in keys
            if (binding := revision.references.get(k)) is not None
        ]
        sealed = [k for k in keys if revision.unseals_at(k) is not None]
        reads.append((checker_id(check, revision), references, sealed))
    _READS[key] = (stage, revision, reads)
    if len(_READS) > 4096:
        _READS.pop(next(iter(_READS)))
    return reads


_READS: dict[tuple[int, int], tuple[SandboxStage, Revision, _Reads]] = {}
"""(stage id, revision id) -> (the stage, the revision, ``_reads``); both kept, so neither id
is reused while cached."""


def _isolation(outcomes: list[Outcome]) -> str:
    """How the stage's submitted code ran, as the checks that ran code report it."""
    found = sorted(
        {str(o.evidence["isolation"]) for o in outcomes if o.evidence and "isolation" in o.evidence}
    )
    return ", ".join(found) if found else "none needed: no submitted code ran"


def conformance_key(checker: str, spec: dict[str, Any]) -> str:
    """What conformed: a checker's bytes run as one check spec (its command, references,
    roles and limits), so another spec of the same checker has not conformed by it."""
    return f"{checker}#{canonical_digest(spec)}"


def _escape(check: Check, references: Path) -> Outcome | None:
    """A check whose verifier-side path leaves the reference it names (publishing refuses such
    paths; this holds even for a contract stored before that rule)."""
    for value in check.spec.verifier_files():
        inside = os.path.realpath(references / head(value))
        if os.path.commonpath([inside, os.path.realpath(references / value)]) != inside:
            return Outcome.inconclusive(
                f"the check's path {value!r} leaves the reference it names; it was not run"
            ).with_kind(check.kind.name)
    return None


def gate(outcome: Outcome, who: str, inputs: Inputs, spec: dict[str, Any]) -> Outcome:
    """A revoked checker concludes nothing; a program checker that has not conformed cannot
    verify (its refutations stand: a checker that cannot be trusted to pass work can still be
    the author's word that it fails, and hiding that would mask a finding)."""
    why = inputs.revoked.get(who)
    if why is not None:
        return Outcome.inconclusive(
            f"the checker {who} was revoked ({why}); it no longer concludes anything",
            outcome.evidence,
        ).with_kind(outcome.kind or "")
    if (
        who.startswith("program:")
        and outcome.status is Status.VERIFIED
        and conformance_key(who, spec) not in inputs.conformed
    ):
        return Outcome.inconclusive(
            f"the checker {who} has not reproduced this contract's conformance fixtures, so it "
            "cannot make a submission verified (it said: verified)",
            outcome.evidence,
        ).with_kind(outcome.kind or "")
    return outcome


def stage_detail(records: list[CheckRecord], status: Status) -> str:
    """One line: how many checks passed, and the first that did not pass, by kind."""
    passed = sum(r.status is Status.VERIFIED for r in records)
    if status is Status.VERIFIED:
        return f"{passed} of {len(records)} checks passed"
    first = next(r for r in records if r.status is status)
    return f"{passed} of {len(records)} checks passed; {first.kind}: {first.detail}"
