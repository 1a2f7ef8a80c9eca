"""Items: one episode to judge, as every interface sends it (HTTP, batch lines, MCP, adapters).

::

    {"id": "ep-1", "checks": [...] | "task": {"checks": [...], ...},
     "answer": "...", "workspace": "dir", "receipts": [...], "mode": "all",
     "idempotency_key": "..."}

Paths are the one thing an item can name that lies outside it, and an item comes from whoever
can reach the interface. So every path (the workspace, and each verifier-side file a check names)
must resolve, symlinks followed, inside a root the operator chose; with no root, an item that
names a path is refused. Nothing in an item is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay._config import Config
from assay._errors import InvalidInput
from assay._signed import canonical_digest
from assay.checks import CheckContext, Receipt, Task, build_checks, spec_error
from assay.status import Mode

UNFIT_LABEL = "label_does_not_fit"
"""The key a template puts in an item when the label does not fit it: the item is then refused,
naming why (an item sent with this key is refused just the same)."""


class _TaskPart(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    checks: list[dict[str, Any]]
    mode: Mode | None = Field(None, strict=False)
    answer: str | None = None
    workspace: str | None = None
    receipts: list[Receipt] | None = None
    description: str | None = None


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=200)
    checks: list[dict[str, Any]] | None = None
    task: _TaskPart | None = None
    answer: str | None = None
    workspace: str | None = None
    receipts: list[Receipt] | None = None
    mode: Mode | None = Field(None, strict=False)
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = None


@dataclass(frozen=True)
class Episode:
    """A validated item: its checks built, every path it names inside the root."""

    id: str
    task: Task
    idempotency_key: str | None
    runs_code: bool
    """Some check runs code in the sandbox: seconds, not microseconds (a service queues it)."""
    fingerprint: str
    """sha256 of the item without ``id`` and ``idempotency_key``: a key stands for this work
    only, so a key sent again with other work can never be answered with the first verdict."""


def item_id(data: Any) -> str:
    """The id to answer an item under, even one too broken to parse ("" when it has none)."""
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str) and 0 < len(value) <= 200:
            return value
    return ""


def parse_episode(data: Any, *, root: Path | None, config: Config, where: str = "item") -> Episode:
    """An Episode from parsed JSON; InvalidInput (``where`` plus the field) when it is wrong."""
    if not isinstance(data, dict):
        raise InvalidInput(f"must be a JSON object, not {type(data).__name__}", where=where)
    unfit = data.get(UNFIT_LABEL)
    if isinstance(unfit, str):
        raise InvalidInput(f"the label does not fit the template: {unfit}", where=f"{where}.label")
    try:
        item = _Item.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(spec_error(exc), where=where) from None
    if (item.checks is None) == (item.task is None):
        raise InvalidInput("give exactly one of `checks` and `task`", where=where)
    part = item.task
    specs = part.checks if part is not None else (item.checks or [])
    field = "checks" if part is None else "task.checks"
    checks = build_checks(specs, where=f"{where}.{field}")
    mode = item.mode or (part.mode if part else None) or Mode.ALL
    answer = item.answer if item.answer is not None else (part.answer if part else None)
    workspace = item.workspace if item.workspace is not None else (part.workspace if part else None)
    receipts = item.receipts if item.receipts is not None else (part.receipts if part else None)
    ws_field = "workspace" if item.workspace is not None else "task.workspace"
    ws_path = None if workspace is None else _inside(root, workspace, f"{where}.{ws_field}")
    for index, check in enumerate(checks):
        for name in check.spec.verifier_files():
            _inside(root, name, f"{where}.{field}[{index}]")
    context = CheckContext(
        answer=answer,
        workspace=ws_path,
        receipts=tuple(receipts or ()),
        base_dir=root,
        config=config,
    )
    body = {key: value for key, value in data.items() if key not in ("id", "idempotency_key")}
    return Episode(
        id=item.id,
        task=Task(checks, mode, context),
        idempotency_key=item.idempotency_key,
        runs_code=any(check.spec.runs_code for check in checks),
        fingerprint=canonical_digest(body),
    )


def _inside(root: Path | None, name: str, where: str) -> Path:
    """``name`` resolved under ``root``, or InvalidInput: absolute, ``..``, a symlink out, or
    no root at all. The message names the field, never what lies at the path."""
    if root is None:
        raise InvalidInput(
            f"names the path {name!r}, but no workspace root is configured, so no path is read",
            where=where,
        )
    pure = PurePosixPath(name)
    if "\x00" in name or "\\" in name or pure.is_absolute() or ".." in pure.parts:
        raise InvalidInput(
            f"{name!r} must be a relative path inside the workspace root (no '..', no '/')",
            where=where,
        )
    base = root.resolve()
    resolved = (base / name).resolve()
    if resolved != base and base not in resolved.parents:
        raise InvalidInput(f"{name!r} leads outside the workspace root", where=where)
    return resolved
