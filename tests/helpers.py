"""Shared test helpers: run one kind against a context built from keyword arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay import CheckContext, Config, Outcome, Receipt, Status, build_check


def run_kind(
    kind: str,
    *,
    answer: str | None = None,
    workspace: Path | None = None,
    receipts: list[dict[str, Any]] | None = None,
    base_dir: Path | None = None,
    config: Config | None = None,
    **spec: Any,
) -> Outcome:
    check = build_check({"kind": kind, **spec})
    ctx = CheckContext(
        answer=answer,
        workspace=workspace,
        receipts=tuple(Receipt(**r) for r in receipts or []),
        base_dir=base_dir,
        config=config or Config(),
    )
    return check.run(ctx)


V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR
