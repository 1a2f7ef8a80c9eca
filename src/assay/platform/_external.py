"""An external stage's conclusion: a rule applied to supplied evidence, or a party's word.

For a ``rule`` stage assay decides: the evidence is strict JSON and meets the contract's JSON
Schema (verified) or not (refuted, naming the first failing place), judged exactly as the
``json_schema`` kind judges an artifact (nothing fetched, patterns with ECMA-262 meaning and a
time limit). For a ``party`` stage the named party decides and assay records who, when and why.
"""

from __future__ import annotations

import json
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay._strict import StrictJSONError, loads_strict
from assay.checks import validate_json
from assay.status import Status


def apply_rule(schema: dict[str, Any], evidence: bytes, config: Config) -> tuple[Status, str]:
    """verified when ``evidence`` meets ``schema``; refuted naming the first failing place;
    inconclusive when the contract's schema cannot be used.

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
    return outcome.status, outcome.detail
