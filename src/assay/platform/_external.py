"""An external stage's conclusion: a rule applied to supplied evidence, or a party's word.

For a ``rule`` stage assay decides: the evidence is strict JSON and meets the contract's JSON
Schema (verified) or not (refuted, naming the first failing place), judged exactly as the
``json_schema`` kind judges an artifact (nothing fetched, patterns with ECMA-262 meaning and a
time limit). For a ``party`` stage the named party decides and assay records who, when and why.

A rule stage's ``binds`` tie the evidence to the submission it concludes (a report naming the
image the entry names, or the entry's sha256): without them a report about another entry would
conclude this one. Evidence about other work is refused at the door (nothing recorded, the run
keeps waiting), like evidence that is not JSON: a supplier's slip is no finding about this
work, and recorded it would stand against a later right report. What the binds find wrong with
the submission itself (no such role, not JSON, no such place) refutes; a bound artifact that
was withdrawn leaves the stage inconclusive. Messages quote only what the supplier sent, never
the artifact's values (under independent entry the supplier may not see the entry).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay._strict import StrictJSONError, loads_strict, strict_equal
from assay.checks import validate_json
from assay.ledger import LedgerError
from assay.platform._contract import Bind
from assay.platform._records import ArtifactRecord
from assay.status import Status

MISSING = object()
"""What ``member`` gives for a place the document does not have (``None`` is JSON null)."""

_INDEX = re.compile(r"0|[1-9][0-9]*")
"""An array index in a JSON Pointer: ASCII digits, no leading zero (``str.isdigit`` would also
take ``²`` or ``١``)."""

_UNCHECKED = object()
"""A bind's expected value when the artifact's bytes were withdrawn."""


def apply_rule(
    schema: dict[str, Any],
    evidence: bytes,
    config: Config,
    binds: Sequence[Bind] = (),
    artifacts: Mapping[str, ArtifactRecord] | None = None,
    read: Callable[[str], bytes] | None = None,
    withdrawn: Collection[str] = (),
) -> tuple[Status, str]:
    """verified when ``evidence`` meets ``schema`` and every bind holds against the
    submission's ``artifacts`` (bytes by sha256 from ``read``; roles in ``withdrawn`` are not
    read); refuted naming the first failing place of the schema, or what the submission lacks
    for a bind; inconclusive when the contract's schema cannot be used or a bound artifact was
    withdrawn.

    InvalidInput when the evidence is not strict JSON text, or is about other work (a bind's
    place missing from it, or holding another value): nothing is recorded and the run keeps
    waiting."""
    try:
        text = evidence.decode("utf-8")
        document = loads_strict(text)
    except (UnicodeDecodeError, StrictJSONError) as exc:
        raise InvalidInput(f"the evidence is not strict JSON: {exc}", where="--evidence") from None
    outcome = validate_json(
        json.dumps(schema).encode("utf-8"),
        text,
        timeout=config.regex_timeout,
        schema_name="of the stage's rule",
        document_name="the evidence",
    )
    if outcome.status is not Status.VERIFIED or not binds:
        return outcome.status, outcome.detail
    expected = [_expected(b, artifacts or {}, read, withdrawn) for b in binds]
    for bind, (value, _) in zip(binds, expected, strict=True):
        said = member(document, bind.evidence)
        if said is MISSING:
            raise InvalidInput(
                f"the evidence has no {bind.evidence}, which ties it to the {bind.role}; "
                "nothing was recorded",
                where="--evidence",
            )
        if value is not MISSING and value is not _UNCHECKED and not _same(bind, said, value):
            where = f"the {bind.role}'s {bind.at}" if bind.at else f"the {bind.role}'s sha256"
            raise InvalidInput(
                f"the evidence is about other work: its {bind.evidence} ({_short(said)}) is not "
                f"{where}; nothing was recorded",
                where="--evidence",
            )
    for value, problem in expected:
        if value is MISSING:
            return Status.REFUTED, problem
    unchecked = [problem for value, problem in expected if value is _UNCHECKED]
    if unchecked:
        return Status.INCONCLUSIVE, "; ".join(unchecked)
    held = ", ".join(f"{b.evidence} = {b.role}{b.at or ' sha256'}" for b in binds)
    return Status.VERIFIED, f"{outcome.detail}; the evidence is about this submission ({held})"


def _expected(
    bind: Bind,
    artifacts: Mapping[str, ArtifactRecord],
    read: Callable[[str], bytes] | None,
    withdrawn: Collection[str],
) -> tuple[Any, str]:
    """The value the evidence must hold for ``bind``, or ``MISSING`` with what the submission
    lacks (a refutation), or ``_UNCHECKED`` (the bytes were withdrawn)."""
    artifact = artifacts.get(bind.role)
    if artifact is None:
        return MISSING, f"the submission has no {bind.role} for the evidence to be about"
    if bind.at is None:
        return artifact.sha256, ""  # recorded with the submission: known after a withdrawal
    if artifact.tree or read is None:
        return MISSING, f"the {bind.role} is a folder, not a JSON document"
    if bind.role in withdrawn:
        return _UNCHECKED, f"the {bind.role} was withdrawn: its {bind.at} cannot be compared"
    try:
        content = loads_strict(read(artifact.sha256).decode("utf-8"))
    except LedgerError:
        return _UNCHECKED, f"the {bind.role}'s bytes are gone: its {bind.at} cannot be compared"
    except (UnicodeDecodeError, StrictJSONError):
        return MISSING, f"the {bind.role} is not strict JSON, so its {bind.at} cannot be read"
    value = member(content, bind.at)
    if value is MISSING:
        return MISSING, f"the {bind.role} has no {bind.at}"
    return value, ""


def _same(bind: Bind, said: Any, expected: Any) -> bool:
    """Equal as JSON values, types included (``1`` is not ``1.0``, ``true`` is not ``1``); a
    sha256 in either case."""
    if bind.at is None and isinstance(said, str):
        return bool(said.lower() == expected)
    return strict_equal(expected, said)


def member(document: Any, pointer: str) -> Any:
    """The value a JSON Pointer (RFC 6901) names, or ``MISSING``."""
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(document, dict) and token in document:
            document = document[token]
        elif isinstance(document, list) and _INDEX.fullmatch(token):
            index = int(token)
            if index >= len(document):
                return MISSING
            document = document[index]
        else:
            return MISSING
    return document


def _short(value: Any) -> str:
    text = json.dumps(value)  # ASCII: a lone surrogate in the value cannot break a page
    return text if len(text) <= 120 else text[:117] + "..."
