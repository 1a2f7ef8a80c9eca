"""Publishing a draft: its files bound to bytes in the blob store, laid out again for checks, and
each program checker's conformance, run before it may judge and recorded."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

from assay._config import Config
from assay._errors import InvalidInput
from assay.checks import build_check
from assay.ledger import BlobStore
from assay.platform._contract import Contract, SandboxStage, head
from assay.platform._evaluate import conformance_key
from assay.platform._folder import Draft
from assay.platform._records import ConformanceRecord
from assay.platform._revision import Binding, Revision
from assay.sandbox import (
    Limits,
    configured_sandbox,
    conformance,
    default_command,
    with_result_channel,
)


def bind(draft: Draft, blobs: BlobStore, cap: int) -> Revision:
    """Store every file the draft names and bind it to its bytes: the revision."""

    def one(path: Path, sealed: datetime | None = None) -> Binding:
        tree = path.is_dir()
        blob = blobs.put_tree(path, cap) if tree else blobs.put_file(path, cap)
        return Binding(sha256=blob.sha256, size=blob.size, tree=tree, sealed_until=sealed)

    return Revision(
        problem=draft.problem,
        title=draft.title,
        statement=one(draft.statement),
        skills={name: one(path) for name, path in draft.skills.items()},
        contract=draft.contract.id if draft.contract else None,
        references={k: one(p, draft.sealed.get(k)) for k, p in draft.references.items()},
        fixtures={k: one(p) for k, p in draft.fixtures.items()},
        policy=draft.policy,
    )


def lay_out(revision: Revision, blobs: BlobStore, folder: Path) -> Path:
    """The revision's references as ``folder/{key}``, from verified bytes, read-only.

    A bound reference whose bytes are gone raises (``BlobMissing``): that is assay's storage
    failing, an ``error`` run, never a check that "cannot read" its input and calls the work
    inconclusive."""
    folder.mkdir()
    try:
        for key, binding in revision.references.items():
            blobs.materialize(binding.sha256, folder / key, tree=binding.tree)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    for path in folder.rglob("*"):
        path.chmod(path.stat().st_mode & ~0o222)
    return folder


def run_conformance(
    contract: Contract,
    revision: Revision,
    rid: str,
    config: Config,
    blobs: BlobStore,
    scratch: Path,
) -> list[ConformanceRecord]:
    """Run every declared checker's fixtures, as each program check of the contract runs it:
    against the revision's references laid out from the blob store exactly as runs see them
    (``scratch/{key}``), never the author's folder, so what conformed is what judges."""
    scratch.mkdir(exist_ok=True)
    references = lay_out(revision, blobs, scratch / "references")
    fixtures = scratch / "fixtures"
    fixtures.mkdir()
    for key, binding in revision.fixtures.items():
        blobs.materialize(binding.sha256, fixtures / key, tree=binding.tree)
    records = []
    for key in contract.conformance:
        checker_id = f"program:{revision.references[key].sha256}"
        specs = {
            json.dumps(check, sort_keys=True): check
            for stage in contract.stages
            if isinstance(stage, SandboxStage)
            for check in stage.checks
            if check.get("kind") == "program" and head(str(check.get("checker", ""))) == key
        }
        if not specs:
            records.append(
                ConformanceRecord(
                    revision=rid,
                    key=key,
                    checker=checker_id,
                    passed=False,
                    detail="no program check of the contract uses this checker",
                )
            )
        for raw in specs.values():
            records.append(_conform(raw, key, checker_id, references, fixtures / key, rid, config))
    return records


def _conform(
    raw: dict[str, object],
    key: str,
    checker_id: str,
    laid_out: Path,
    fixtures: Path,
    rid: str,
    config: Config,
) -> ConformanceRecord:
    spec = build_check(raw).spec
    checker = laid_out / str(raw["checker"])
    command = list(getattr(spec, "command", None) or []) or None
    if getattr(spec, "result_channel", "file") == "fd":
        command = with_result_channel(command or default_command(checker))
    references = {
        name: laid_out / value for name, value in (getattr(spec, "references", None) or {}).items()
    }
    limits = Limits(
        timeout=getattr(spec, "timeout", 30.0), memory_mb=getattr(spec, "memory_mb", 1024)
    )
    try:
        result, _ = conformance(
            configured_sandbox(config),
            checker,
            command,
            fixtures,
            None,
            limits,
            references,
            None,
            config.max_staged_mb * 1024 * 1024,
            roles=list(getattr(spec, "artifacts", {}) or {}),
        )
    except InvalidInput as exc:
        return ConformanceRecord(
            revision=rid,
            key=key,
            checker=checker_id,
            conformance_key=conformance_key(checker_id, raw),
            passed=False,
            detail=f"the fixtures cannot be used: {exc}",
        )
    return ConformanceRecord(
        revision=rid,
        key=key,
        checker=checker_id,
        conformance_key=conformance_key(checker_id, raw),
        passed=result.passed,
        detail=result.describe(),
        digest=result.digest,
    )
