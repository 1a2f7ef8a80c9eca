"""``assay problem show``: the verification process, stated before anyone starts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from assay.checks import build_check
from assay.platform._contract import Contract, ExternalStage, ReviewStage, SandboxStage
from assay.platform._revision import Revision
from assay.platform._views import ProblemView, ReferenceView, StageSummary


def _establishes(stage: SandboxStage | ReviewStage | ExternalStage) -> str:
    if stage.establishes:
        return stage.establishes
    if isinstance(stage, SandboxStage):
        kinds = ", ".join(str(c.get("kind")) for c in stage.checks)
        rule = "every check passes" if stage.mode == "all" else "the weighted checks"
        return f"assay runs {len(stage.checks)} check(s) ({kinds}); it passes when {rule}"
    if isinstance(stage, ReviewStage):
        return (
            "people review the work under the stage's protocol (seats claimed by eligible, "
            "non-conflicted reviewers; deterministic reducers decide)"
        )
    if stage.mechanism == "party":
        return f"{stage.party} records verified, refuted or inconclusive with a reason"
    return "assay applies the stage's JSON Schema to evidence someone supplies"


WITHHELD = "(withheld: a hidden check is never shown to the work it judges)"


def _public(spec: dict[str, Any]) -> dict[str, Any]:
    """A check spec as everyone may see it: the kind's private fields (a hidden check's code)
    withheld, every other field as the author wrote it."""
    private = build_check(spec).spec.private_fields
    return {k: WITHHELD if k in private else v for k, v in spec.items()}


def _summary(stage: SandboxStage | ReviewStage | ExternalStage) -> StageSummary:
    if isinstance(stage, SandboxStage):
        checks = [str(c.get("description") or c.get("kind")) for c in stage.checks]
        return StageSummary(
            name=stage.name,
            type=stage.type,
            establishes=_establishes(stage),
            checks=checks,
            specs=[_public(c) for c in stage.checks],
        )
    if isinstance(stage, ReviewStage):
        return StageSummary(
            name=stage.name,
            type=stage.type,
            establishes=_establishes(stage),
            protocol=stage.protocol,
        )
    return StageSummary(
        name=stage.name,
        type=stage.type,
        establishes=_establishes(stage),
        mechanism=stage.mechanism,
        party=stage.party,
        rule=stage.evidence_schema,
        supplied_by=stage.supplied_by,
        binds=[b.to_json() for b in stage.binds] or None,
    )


def problem_view(
    revision: Revision,
    rid: str,
    contract: Contract | None,
    revisions: int,
    published: datetime,
    published_by: str | None = None,
) -> ProblemView:
    """The current revision's process: stages in order, roles, references (sealed ones too)."""
    described = {r.key: r.description for r in contract.references} if contract else {}
    return ProblemView(
        problem=revision.problem,
        title=revision.title,
        revision=rid,
        contract=revision.contract,
        revisions=revisions,
        acceptance=contract.acceptance if contract else None,
        roles=[r.to_json() for r in contract.roles] if contract else [],
        references=[
            ReferenceView(
                key=key,
                size=binding.size,
                sha256=binding.sha256,
                folder=binding.tree,
                sealed_until=revision.unseals_at(key),
                description=described.get(key),
            )
            for key, binding in sorted(revision.references.items())
        ],
        stages=[_summary(s) for s in (contract.stages if contract else [])],
        skills=[
            {"path": path, "sha256": b.sha256, "size": b.size}
            for path, b in sorted(revision.skills.items())
        ],
        policy=revision.policy.to_json(),
        published=published,
        published_by=published_by,
    )
