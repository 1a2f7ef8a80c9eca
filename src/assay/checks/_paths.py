"""Resolving a spec's path inside the workspace, refusing every way out of it.

A path escapes when it is absolute, climbs with ``..``, or passes through a symlink that points
outside. Escape is a finding about the work (``refuted``): a workspace that links its "answer"
to a file elsewhere has not produced that file.
"""

from __future__ import annotations

import os
from pathlib import Path


class WorkspaceEscape(Exception):
    """The path leaves the workspace; the message says how."""


def resolve_in_workspace(workspace: Path, relative: str) -> Path:
    """The real path of ``relative`` inside ``workspace``, or WorkspaceEscape."""
    if os.path.isabs(relative) or relative.startswith("~"):
        raise WorkspaceEscape(f"{relative!r} escapes the workspace: absolute paths are refused")
    root = Path(os.path.realpath(workspace))
    target = Path(os.path.realpath(root / relative))
    if target != root and root not in target.parents:
        how = "through a symlink" if ".." not in Path(relative).parts else "with '..'"
        raise WorkspaceEscape(f"{relative!r} escapes the workspace ({how})")
    return target


def read_limited(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it is larger than ``limit`` (never a silent truncation)."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data
