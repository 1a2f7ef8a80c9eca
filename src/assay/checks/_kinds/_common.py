"""Small pieces every kind module shares: getting the answer or a workspace file, or saying why not."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from assay.checks._context import CheckContext
from assay.checks._paths import WorkspaceEscape, read_limited, resolve_in_workspace
from assay.status import Outcome


def answer_or_outcome(ctx: CheckContext) -> str | Outcome:
    """The final answer, or ``inconclusive`` when the episode has none (missing is not wrong)."""
    if ctx.answer is None:
        return Outcome.inconclusive("no final answer was provided to check")
    return ctx.answer


def workspace_path(ctx: CheckContext, relative: str) -> Path | Outcome:
    """The real path of a workspace file, ``refuted`` on escape, ``inconclusive`` with no workspace."""
    if ctx.workspace is None:
        return Outcome.inconclusive("no workspace was provided to check")
    if not ctx.workspace.is_dir():
        return Outcome.inconclusive("the workspace given is not a directory")
    try:
        path = resolve_in_workspace(ctx.workspace, relative)
    except WorkspaceEscape as exc:
        return Outcome.refuted(str(exc))
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in _UNREACHABLE:  # the work made the path this way: a finding about it
            return Outcome.refuted(f"{relative!r} cannot be opened: {exc.strerror}")
    return path


_UNREACHABLE = (errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES, errno.EPERM)
"""Reasons a workspace path cannot be opened that the workspace's own links and modes cause
(a real path past PATH_MAX, a loop): refutations, never an ``error`` the work could hide behind."""


def workspace_text(ctx: CheckContext, relative: str) -> str | Outcome:
    """A workspace file's UTF-8 text, or the outcome that explains why it cannot be read.

    A file over ``max_file_bytes`` is ``refuted``, not inconclusive: the work wrote that file,
    so its size is a finding about the work, and a wrong file padded past the read limit must
    not turn its refutation into "no conclusion" (adversarial review adv-agda).
    """
    path = workspace_path(ctx, relative)
    if isinstance(path, Outcome):
        return path
    if not path.exists():
        return Outcome.refuted(f"{relative!r} does not exist in the workspace: create it")
    if not path.is_file():
        return Outcome.refuted(f"{relative!r} is not a regular file")
    data = read_limited(path, ctx.config.max_file_bytes)
    if data is None:
        return Outcome.refuted(
            f"{relative!r} is larger than the {ctx.config.max_file_bytes} byte read limit"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Outcome.refuted(f"{relative!r} is not UTF-8 text (byte {exc.start} is invalid)")


def shorten(text: str, limit: int = 120) -> str:
    """One line, at most ``limit`` characters, for quoting text in a detail."""
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
