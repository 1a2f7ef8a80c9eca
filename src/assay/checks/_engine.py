"""Building checks from plain data and running them: the one path every interface uses.

A spec is validated when the check is built, so a malformed check is refused before anything
runs. Running never raises: an exception inside a kind becomes an ``error`` outcome naming it, and
the other checks still run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from assay._errors import InvalidSpec
from assay.checks._context import CheckContext
from assay.checks._registry import Kind, all_kinds, get_kind
from assay.checks._spec import Spec
from assay.status import Mode, Outcome, Report, combine

_UNION_TAG = re.compile(r"^(int|float|str|bool|none|list\[.*\]|dict\[.*\]|function-.*|.*\[.*\])$")


@dataclass(frozen=True)
class Check:
    """A validated check, ready to run any number of times."""

    kind: Kind
    spec: Spec

    def run(self, ctx: CheckContext) -> Outcome:
        """Run the check; never raises (see the module docstring)."""
        try:
            outcome = self.kind.function(self.spec, ctx)
        except Exception as exc:
            # an OSError's text names the file: the server's own paths stay out of the detail
            said = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            outcome = Outcome.error(
                f"check {self.kind.name!r} failed inside assay: {type(exc).__name__}: {said}"
            )
        return outcome.with_kind(self.kind.name)


def _field_path(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif not _UNION_TAG.match(item):
            parts.append(f".{item}" if parts else item)
    return "".join(parts)


def spec_error(exc: ValidationError) -> str:
    """Pydantic's errors as one line naming each field: ``value: Field required``."""
    messages: list[str] = []
    seen: set[str] = set()
    for error in exc.errors():
        field = _field_path(tuple(error["loc"]))
        if field in seen:
            continue  # a union reports one error per branch; the first says enough
        seen.add(field)
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field (a typo would silently weaken the check)"
        messages.append(f"{field}: {message}" if field else message)
    return "; ".join(messages)


def build_check(raw: Mapping[str, Any], where: str = "check") -> Check:
    """A Check from ``{"kind": ..., field: ...}``; InvalidSpec names the field that is wrong."""
    if type(raw) is not dict and not isinstance(raw, Mapping):  # skip the ABC check for a dict
        raise InvalidSpec(f"must be an object with a 'kind', not {type(raw).__name__}", where=where)
    name = raw.get("kind")
    if not isinstance(name, str) or not name:
        raise InvalidSpec("'kind' is required (see `assay kinds`)", where=where)
    found = get_kind(name)
    if found is None:
        known = ", ".join(k.name for k in all_kinds())
        raise InvalidSpec(f"unknown kind {name!r}; known kinds: {known}", where=where)
    fields = dict(raw)
    del fields["kind"]  # present: ``name`` came from it
    try:
        # The model's validator itself (what ``model_validate`` calls, minus its keyword frame).
        spec = found.spec.__pydantic_validator__.validate_python(fields)
    except ValidationError as exc:
        raise InvalidSpec(spec_error(exc), kind=name, where=f"{where} ({name})") from None
    return Check(found, spec)


def build_checks(raw: Sequence[Mapping[str, Any]], where: str = "checks") -> list[Check]:
    """Build every check, refusing an empty list: nothing checked is never a pass."""
    if not raw:
        raise InvalidSpec("there are no checks: an empty check list is never a pass", where=where)
    return [build_check(item, f"{where}[{i}]") for i, item in enumerate(raw)]


def run_checks(checks: Sequence[Check], ctx: CheckContext, mode: Mode | str = Mode.ALL) -> Report:
    """Run every check against one context and combine the outcomes into a report."""
    if not checks:
        raise InvalidSpec(
            "there are no checks: an empty check list is never a pass", where="checks"
        )
    outcomes = [check.run(ctx) for check in checks]
    return combine(outcomes, mode, [check.spec.weight for check in checks])
