"""The one registry of check kinds.

A kind is a name, a spec model and a pure function ``(spec, context) -> Outcome``. Registering a
name twice is an error at import time, so two modules can never silently shadow each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from assay.checks._context import CheckContext
from assay.checks._spec import Spec
from assay.status import Outcome

S = TypeVar("S", bound=Spec)
KindFunction = Callable[[Any, CheckContext], Outcome]


@dataclass(frozen=True)
class Kind:
    """A registered kind: what the docs, ``assay kinds`` and the engine all read."""

    name: str
    spec: type[Spec]
    function: KindFunction
    summary: str
    """First paragraph of the function's docstring: what a pass establishes."""
    doc: str
    """The whole docstring: limits and the hacks a kind does or does not admit."""


_REGISTRY: dict[str, Kind] = {}


def kind(
    name: str, spec: type[S]
) -> Callable[[Callable[[S, CheckContext], Outcome]], Callable[[S, CheckContext], Outcome]]:
    """Register ``function`` as kind ``name`` with its spec model."""

    def register(
        function: Callable[[S, CheckContext], Outcome],
    ) -> Callable[[S, CheckContext], Outcome]:
        if name in _REGISTRY:
            raise RuntimeError(f"check kind {name!r} is registered twice")
        doc = (function.__doc__ or "").strip()
        if not doc:
            raise RuntimeError(f"check kind {name!r} has no docstring to document it")
        summary = " ".join(doc.split("\n\n")[0].split())
        _REGISTRY[name] = Kind(name, spec, function, summary, _dedent(doc))
        return function

    return register


def _dedent(doc: str) -> str:
    import textwrap

    first, _, rest = doc.partition("\n")
    return (first + "\n" + textwrap.dedent(rest)).strip()


def get_kind(name: str) -> Kind | None:
    """The kind registered as ``name``, or None (callers name the field in their own error)."""
    return _REGISTRY.get(name)


def all_kinds() -> list[Kind]:
    """Every registered kind, sorted by name."""
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]
