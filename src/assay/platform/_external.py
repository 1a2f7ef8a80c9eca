"""An external stage's conclusion: a rule applied to supplied evidence, or a party's word.

For a ``rule`` stage assay decides: the evidence is strict JSON and meets the contract's JSON
Schema (verified) or not (refuted, naming the first failing place), judged exactly as the
``json_schema`` kind judges an artifact (nothing fetched, patterns with ECMA-262 meaning and a
time limit). For a ``party`` stage the named party decides and assay records who, when and why.

A rule stage's ``binds`` tie the evidence to the submission it concludes (a report naming the
image the entry names, or the entry's sha256): without them a report about another entry would
conclude this one. A bind that does not hold is a refutation: the evidence is about other work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay._strict import StrictJSONError, loads_strict
from assay.checks import validate_json
from assay.ledger import LedgerError
from assay.platform._contract import Bind
from assay.platform._records import ArtifactRecord
from assay.status import Status

MISSING = object()
"""What ``member`` gives for a place the document does not have (``None`` is JSON null)."""


def apply_rule(
    schema: dict[str, Any],
    evidence: bytes,
    config: Config,
    binds: Sequence[Bind] = (),
    artifacts: Mapping[str, ArtifactRecord] | None = None,
    read: Callable[[str], bytes] | None = None,
) -> tuple[Status, str]:
    """verified when ``evidence`` meets ``schema`` and every bind holds against the
    submission's ``artifacts`` (bytes by sha256 from ``read``); refuted naming the first
    failing place or bind; inconclusive when the contract's schema cannot be used or a bound
    artifact's bytes were withdrawn.

    InvalidInput when the evidence is not strict JSON text: nothing was supplied to judge, so
    nothing is recorded and the run keeps waiting."""
    try:
        text = evidence.decode("utf-8")
        loads_strict(text)
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
    document = json.loads(text)
    for bind in binds:
        status, detail = _holds(bind, document, artifacts or {}, read)
        if status is not Status.VERIFIED:
            return status, detail
    held = ", ".join(f"{b.evidence} = {b.role}{b.at or ' sha256'}" for b in binds)
    return Status.VERIFIED, f"{outcome.detail}; the evidence is about this submission ({held})"


def _holds(
    bind: Bind,
    evidence: Any,
    artifacts: Mapping[str, ArtifactRecord],
    read: Callable[[str], bytes] | None,
) -> tuple[Status, str]:
    said = member(evidence, bind.evidence)
    if said is MISSING:
        return Status.REFUTED, f"the evidence has no {bind.evidence} to tie it to the {bind.role}"
    artifact = artifacts.get(bind.role)
    if artifact is None:
        return Status.REFUTED, f"the submission has no {bind.role} for the evidence to be about"
    if bind.at is None:
        expected: Any = artifact.sha256
    elif artifact.tree or read is None:
        return Status.REFUTED, f"the {bind.role} is a folder, not a JSON document"
    else:
        try:
            content = loads_strict(read(artifact.sha256).decode("utf-8"))
        except LedgerError:
            return Status.INCONCLUSIVE, f"the {bind.role}'s bytes were withdrawn: bind unchecked"
        except (UnicodeDecodeError, StrictJSONError):
            return Status.REFUTED, f"the {bind.role} is not JSON, so {bind.at} cannot be read"
        expected = member(content, bind.at)
        if expected is MISSING:
            return Status.REFUTED, f"the {bind.role} has no {bind.at}"
    if not same_json(said, expected):
        where = f"{bind.role}{bind.at}" if bind.at else f"{bind.role}'s sha256"
        return (
            Status.REFUTED,
            f"the evidence is about other work: its {bind.evidence} is {_short(said)}, the "
            f"{where} is {_short(expected)}",
        )
    return Status.VERIFIED, ""


def member(document: Any, pointer: str) -> Any:
    """The value a JSON Pointer (RFC 6901) names, or ``MISSING``."""
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(document, dict) and token in document:
            document = document[token]
        elif isinstance(document, list) and token.isdigit() and (token == "0" or token[0] != "0"):
            index = int(token)
            if index >= len(document):
                return MISSING
            document = document[index]
        else:
            return MISSING
    return document


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (Python says ``1 == 1.0 == True``; JSON does not
    say ``true`` is ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."
