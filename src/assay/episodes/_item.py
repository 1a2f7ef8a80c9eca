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

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay._config import Config
from assay._errors import InvalidInput
from assay._signed import canonical_digest
from assay.checks import CheckContext, Receipt, Task, build_checks, spec_error
from assay.status import Mode

_STRICT = json.JSONEncoder(allow_nan=False)
"""Refuses what strict JSON cannot carry (NaN, infinity, bytes, sets), as the digest does."""

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


@dataclass(frozen=True, init=False)
class Episode:
    """A validated item: its checks built, every path it names inside the root."""

    id: str
    task: Task
    idempotency_key: str | None
    runs_code: bool
    """Some check runs code in the sandbox: seconds, not microseconds (a service queues it)."""
    body: dict[str, Any] = field(repr=False, compare=False)
    """The item as sent, without ``id`` and ``idempotency_key`` (what the fingerprint covers)."""
    reads_files: bool = False
    """The item names a workspace or a verifier-side file: its verdict depends on files the
    fingerprint does not cover, so no stored verdict may ever answer it again."""

    def __init__(
        self,
        id: str,
        task: Task,
        idempotency_key: str | None,
        runs_code: bool,
        body: dict[str, Any],
        reads_files: bool = False,
    ) -> None:
        """The generated ``__init__`` of a frozen dataclass sets each field through
        ``object.__setattr__``; one episode is built per item, so this one fills the instance's
        dict at once (same fields, same defaults), as ``CheckContext`` does."""
        self.__dict__.update(
            id=id,
            task=task,
            idempotency_key=idempotency_key,
            runs_code=runs_code,
            body=body,
            reads_files=reads_files,
        )

    @functools.cached_property
    def fingerprint(self) -> str:
        """sha256 of the item without ``id`` and ``idempotency_key``: a key stands for this work
        only, so a key sent again with other work can never be answered with the first verdict.
        Computed when first asked (an item with a key: while it is parsed), not for every item:
        at thousands of items a second the digest is a tenth of the cost of judging one."""
        return canonical_digest(self.body)


def item_id(data: Any) -> str:
    """The id to answer an item under, even one too broken to parse ("" when it has none)."""
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str) and 0 < len(value) <= 200:
            return value
    return ""


def parse_episode(
    data: Any,
    *,
    root: Path | None,
    config: Config,
    where: str = "item",
    workspaces: Path | None = None,
    from_json: bool = False,
) -> Episode:
    """An Episode from parsed JSON; InvalidInput (``where`` plus the field) when it is wrong.

    ``root`` holds the verifier-side files checks name (databases, schemas, hidden checks);
    ``workspaces``, when given, is where workspaces must lie instead, and no verifier-side file
    may lie in it. With one root for both, an item can name any folder of the root as its
    workspace and read what is in it: keep sealed files out of a single root that untrusted
    callers send items against, or give the two roots.

    ``from_json``: ``data`` is what ``loads_strict`` read (the service, batch lines), so every
    value in it is already a JSON value and the check that it encodes is skipped; a Python
    caller's values (which may hold NaN, bytes, a set) are checked.
    """
    if not isinstance(data, dict):
        raise InvalidInput(f"must be a JSON object, not {type(data).__name__}", where=where)
    if type(data) is not dict:
        # A subclass may show a view (``items``, ``get``) other than its storage, which the
        # model reads: the episode is built from one plain copy of the storage.
        data = dict(dict.items(data))
    unfit = data.get(UNFIT_LABEL)
    if isinstance(unfit, str):
        raise InvalidInput(f"the label does not fit the template: {unfit}", where=f"{where}.label")
    try:
        item = _READ_ITEM(data)
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
    ws_root = root if workspaces is None else workspaces
    ws_path = None
    if workspace is not None:
        ws_path = _inside(ws_root, workspace, f"{where}.{ws_field}")
        if ws_path == root_path(root):
            raise InvalidInput(
                "the workspace must be a folder inside the root, not the root itself (it holds "
                "the verifier's files)",
                where=f"{where}.{ws_field}",
            )
        if not ws_path.is_dir():
            raise InvalidInput(f"{workspace!r} is not a folder", where=f"{where}.{ws_field}")
    named_files = ws_path is not None
    fenced = [] if ws_path is None else [ws_path]
    if workspaces is not None:
        fenced.append(workspaces.resolve())
    for index, check in enumerate(checks):
        if not check.spec.verifier_fields:  # answer kinds name no file: nothing to resolve
            continue
        for name in check.spec.verifier_files():
            at = f"{where}.{field}[{index}]"
            path = _inside(root, name, at)
            named_files = True
            if any(_within(path, fence) or _within(fence, path) for fence in fenced):
                raise InvalidInput(
                    f"{name!r} is in the workspace, where the work being judged could have "
                    "written it: a verifier-side file must lie outside the workspace",
                    where=at,
                )
    context = CheckContext(
        answer=answer,
        workspace=ws_path,
        receipts=tuple(receipts or ()),
        base_dir=root,
        config=config,
    )
    body = {key: value for key, value in data.items() if key not in ("id", "idempotency_key")}
    episode = Episode(
        id=item.id,
        task=Task(checks, mode, context),
        idempotency_key=item.idempotency_key,
        runs_code=any(check.spec.runs_code for check in checks),
        body=body,
        reads_files=named_files,
    )
    try:  # the digest when a key needs it now, else the cheaper plain encoding
        if episode.idempotency_key is not None:
            _ = episode.fingerprint
        elif not from_json:
            _STRICT.encode(body)
    except (ValueError, TypeError) as exc:  # NaN, bytes, a set: a Python caller's values
        raise InvalidInput(f"holds a value JSON cannot carry: {exc}", where=where) from None
    return episode


_READ_ITEM: Callable[[Any], _Item] = _Item.__pydantic_validator__.validate_python
"""``_Item.model_validate`` without its keyword frame: the model reads every item. (A hand-written
reader of the common shape stood here; measured, pydantic's validator is faster than it.)"""


def root_path(root: Path | None) -> Path | None:
    """The root as paths are compared against it (symlinks resolved)."""
    return None if root is None else root.resolve()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _inside(root: Path | None, name: str, where: str) -> Path:
    """``name`` resolved under ``root``, or InvalidInput: absolute, ``..``, a symlink out, a
    symlink loop, or no root at all. The message names the field and the path as the item wrote
    it, never what lies there nor where the root is."""
    if root is None:
        raise InvalidInput(
            f"names the path {name!r}, but no workspace root is configured, so no path is read",
            where=where,
        )
    try:
        os.fsencode(name)
    except UnicodeError:
        raise InvalidInput(
            f"{name!r} is not a path this system can name (a lone surrogate?)", where=where
        ) from None
    pure = PurePosixPath(name)
    if not name or "\x00" in name or "\\" in name or pure.is_absolute() or ".." in pure.parts:
        raise InvalidInput(
            f"{name!r} must be a relative path inside the root (not empty, no '..', no '/')",
            where=where,
        )
    try:
        base = root.resolve()
        resolved = (base / name).resolve()
    except (OSError, RuntimeError):  # a symlink loop, a name too long for the system
        raise InvalidInput(f"{name!r} cannot be resolved (a symlink loop?)", where=where) from None
    if not _within(resolved, base):
        raise InvalidInput(f"{name!r} leads outside the root", where=where)
    return resolved
