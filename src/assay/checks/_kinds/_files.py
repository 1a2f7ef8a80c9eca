"""Workspace kinds: facts about the files the agent left behind, read without writing.

Every path is relative to the workspace; an absolute path, ``..`` or a symlink that leads outside
is refuted as an escape.
"""

from __future__ import annotations

import os
from typing import Any, Self

from pydantic import Field, model_validator

from assay._strict import StrictJSONError, describe, loads_strict, strict_equal
from assay.checks._context import CheckContext
from assay.checks._kinds._common import shorten, workspace_path, workspace_text
from assay.checks._patterns import PatternTimeout, search, validate_pattern
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome


class PathSpec(Spec):
    """A kind that reads one workspace file."""

    workspace_fields = ("path",)
    path: NonBlank
    """Relative to the workspace."""


@kind("file_exists", PathSpec)
def file_exists(spec: PathSpec, ctx: CheckContext) -> Outcome:
    """The workspace holds a regular file at ``path``.

    Passing says the file exists, nothing about what is in it.
    """
    path = workspace_path(ctx, spec.path)
    if isinstance(path, Outcome):
        return path
    if path.is_file():
        return Outcome.verified(f"{spec.path!r} exists")
    if path.exists():
        return Outcome.refuted(f"{spec.path!r} exists but is not a regular file")
    return Outcome.refuted(f"{spec.path!r} does not exist in the workspace: create it")


@kind("file_absent", PathSpec)
def file_absent(spec: PathSpec, ctx: CheckContext) -> Outcome:
    """Nothing exists at ``path`` in the workspace: no file, directory or (dangling) symlink."""
    path = workspace_path(ctx, spec.path)
    if isinstance(path, Outcome):
        return path
    assert ctx.workspace is not None
    if path.exists() or os.path.lexists(ctx.workspace / spec.path):
        return Outcome.refuted(f"{spec.path!r} exists in the workspace: remove it")
    return Outcome.verified(f"{spec.path!r} is absent")


class ContainsSpec(PathSpec):
    """A workspace file that must contain a text or a match of a pattern."""

    value: NonBlank | None = None
    """A literal substring."""
    pattern: str | None = None
    """A regular expression (``regex`` syntax), searched with a time limit."""

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (self.value is None) == (self.pattern is None):
            raise ValueError("give exactly one of 'value' (literal text) or 'pattern' (regex)")
        if self.pattern is not None:
            validate_pattern(self.pattern)
        return self


@kind("file_contains", ContainsSpec)
def file_contains(spec: ContainsSpec, ctx: CheckContext) -> Outcome:
    """The file at ``path`` contains the literal ``value``, or a match of ``pattern``.

    Substring credit by design: a file that also contains contradicting text still passes. Use
    ``file_equals`` or ``file_json`` when the whole content matters. A pattern that runs past the
    time limit is inconclusive; a pattern that matches empty text is refused when the check is
    built.
    """
    text = workspace_text(ctx, spec.path)
    if isinstance(text, Outcome):
        return text
    if spec.value is not None:
        if spec.value in text:
            return Outcome.verified(f"{spec.path!r} contains {shorten(spec.value)!r}")
        return Outcome.refuted(f"{spec.path!r} does not contain {shorten(spec.value)!r}")
    assert spec.pattern is not None
    try:
        found = search(spec.pattern, text, ctx.config.regex_timeout)
    except PatternTimeout as exc:
        return Outcome.inconclusive(f"searching {spec.path!r}: {exc}")
    if found is not None:
        return Outcome.verified(f"{spec.path!r} matches {spec.pattern!r} at offset {found.start()}")
    return Outcome.refuted(f"{spec.path!r} has no match for the pattern {spec.pattern!r}")


class EqualsSpec(PathSpec):
    """A workspace file whose whole content is fixed."""

    value: str
    """The whole expected content; surrounding whitespace is ignored on both sides."""


def _first_difference(expected: str, actual: str) -> str:
    for number, (want, got) in enumerate(
        zip(expected.splitlines(), actual.splitlines(), strict=False), start=1
    ):
        if want != got:
            return f"line {number}: expected {shorten(want, 60)!r}, found {shorten(got, 60)!r}"
    want_lines, got_lines = len(expected.splitlines()), len(actual.splitlines())
    return f"expected {want_lines} lines, found {got_lines}"


@kind("file_equals", EqualsSpec)
def file_equals(spec: EqualsSpec, ctx: CheckContext) -> Outcome:
    """The file at ``path`` equals ``value`` exactly, after stripping surrounding whitespace."""
    text = workspace_text(ctx, spec.path)
    if isinstance(text, Outcome):
        return text
    expected, actual = spec.value.strip(), text.strip()
    if expected == actual:
        return Outcome.verified(f"{spec.path!r} has the expected content")
    return Outcome.refuted(
        f"{spec.path!r} differs from the expected content at {_first_difference(expected, actual)}"
    )


class JsonSpec(PathSpec):
    """A workspace JSON file, or one value in it, compared type-strictly."""

    key: str | None = Field(None, pattern=r"^[^.]+(\.[^.]+)*$")
    """Dotted path into the document; integer segments index lists (``items.0.name``)."""
    value: Any
    """The expected JSON value, compared type-strictly at every depth (``1`` is not ``1.0``)."""
    tolerance: float | None = Field(None, ge=0, allow_inf_nan=False)
    """Absolute tolerance: ints and floats then compare numerically (bools never do)."""


_MISSING = object()


def _lookup(document: Any, key: str) -> tuple[Any, str]:
    """The value at ``key`` or ``_MISSING``, and the segment path that was reached."""
    current = document
    reached: list[str] = []
    for segment in key.split("."):
        if isinstance(current, dict) and segment in current:
            current = current[segment]
        elif isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return _MISSING, ".".join(reached) or "(the top level)"
        reached.append(segment)
    return current, key


@kind("file_json", JsonSpec)
def file_json(spec: JsonSpec, ctx: CheckContext) -> Outcome:
    """The JSON file at ``path`` (or the value at ``key`` in it) equals ``value`` type-strictly.

    The file must be strict JSON: NaN, Infinity and duplicate keys are refused, since each makes
    the document mean different things to different readers.
    """
    text = workspace_text(ctx, spec.path)
    if isinstance(text, Outcome):
        return text
    try:
        document = loads_strict(text)
    except StrictJSONError as exc:
        return Outcome.refuted(f"{spec.path!r} is not strict JSON: {exc}")
    where = f"{spec.path!r}"
    actual = document
    if spec.key is not None:
        actual, reached = _lookup(document, spec.key)
        if actual is _MISSING:
            return Outcome.refuted(
                f"{spec.path!r} has no key {spec.key!r} (found up to {reached!r})"
            )
        where = f"{spec.path!r} at {spec.key!r}"
    if strict_equal(spec.value, actual, spec.tolerance):
        return Outcome.verified(f"{where} holds the expected value")
    tolerance = f" (tolerance {spec.tolerance:g})" if spec.tolerance is not None else ""
    return Outcome.refuted(
        f"{where} holds {describe(actual)}; expected {describe(spec.value)}{tolerance}",
        evidence={"expected": spec.value, "actual": actual},
    )
