"""Local preflight: the contract's sandbox stages that need no sealed input, run on the
participant's machine exactly as the platform runs them, recording nothing.

It is not verification: nothing is stored, no allowance is spent, and stages that read sealed
references, review stages and external stages are not run. It tells a solver early that a
submission would fail a stage they can check themselves.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from assay._config import Config
from assay._errors import InvalidInput
from assay._wire import WireModel
from assay.ledger import BlobStore
from assay.platform._contract import SandboxStage, head
from assay.platform._evaluate import Inputs, built_checks, sandbox_stage
from assay.platform._folder import load_folder
from assay.platform._publish import bind, lay_out, run_conformance
from assay.platform._views import StageView
from assay.status import Status

NOT_VERIFICATION = (
    "preflight is not verification: nothing was recorded and no allowance was spent; stages "
    "that read sealed references, review and external stages run only on the platform"
)


class Preflight(WireModel):
    """``assay preflight``: what the locally runnable stages say."""

    schema_: Literal["assay.preflight/1"] = Field("assay.preflight/1", alias="schema")
    problem: str
    verification: Literal[False] = False
    note: str = NOT_VERIFICATION
    stages: list[StageView]


def _sealed_keys(stage: SandboxStage, sealed: Mapping[str, datetime]) -> list[str]:
    keys: set[str] = set()
    for check in built_checks(stage):
        keys.update(k for k in map(head, check.spec.verifier_files()) if k in sealed)
    return sorted(keys)


def preflight(
    folder: Path, artifacts: Mapping[str, Path], summary: str | None, config: Config
) -> Preflight:
    """Run the folder's sandbox stages that need no sealed input against local artifacts."""
    draft = load_folder(folder, participant_copy=True)
    contract = draft.contract
    if contract is None:
        raise InvalidInput("this problem pins no contract: there is nothing to check", where="DIR")
    for role in artifacts:
        if contract.role(role) is None:
            raise InvalidInput(f"unknown role {role!r}", where="--artifact")
    stages: list[StageView] = []
    with tempfile.TemporaryDirectory(prefix="assay-preflight-") as tmp:
        blobs = BlobStore(Path(tmp) / "blobs")
        cap = config.max_staged_mb * 1024 * 1024
        revision = bind(draft, blobs, cap)
        references = lay_out(revision, blobs, Path(tmp) / "references")
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        shas = {}
        for role, path in artifacts.items():
            blob = blobs.put_tree(path, cap) if path.is_dir() else blobs.put_file(path, cap)
            blobs.materialize(blob.sha256, workspace / role, tree=path.is_dir())
            shas[role] = blob.sha256
        conformed = {
            c.conformance_key
            for c in run_conformance(
                contract, revision, "preflight", config, blobs, Path(tmp) / "conformance"
            )
            if c.passed and c.conformance_key
        }
        inputs = Inputs(
            run="preflight",
            contract=contract,
            revision=revision,
            references=references,
            workspace=workspace,
            summary=summary,
            artifacts=shas,
            config=config,
            clock=lambda: datetime.now(UTC),
            conformed=conformed,
        )
        for stage in contract.stages:
            if not isinstance(stage, SandboxStage):
                stages.append(
                    StageView(
                        name=stage.name,
                        type=stage.type,
                        status=None,
                        detail=f"a {stage.type} stage runs only on the platform",
                    )
                )
                continue
            sealed = _sealed_keys(stage, draft.sealed)
            if sealed:
                stages.append(
                    StageView(
                        name=stage.name,
                        type="sandbox",
                        status=None,
                        detail=f"runs only on the platform: it reads sealed reference(s) {', '.join(sealed)}",
                    )
                )
                continue
            record = sandbox_stage(stage, inputs, inputs.clock())
            stages.append(
                StageView(
                    name=record.name,
                    type="sandbox",
                    status=record.status,
                    detail=record.detail,
                    checks=[c.to_json() for c in record.checks],
                )
            )
            if record.status is not Status.VERIFIED:
                break
    return Preflight(problem=draft.problem, stages=stages)
