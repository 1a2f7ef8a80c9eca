"""A reviewer's response, checked before it is recorded: strict JSON, the node's response
schema, a declaration of assistance the node accepts, and citations that name only materials
the seat showed. An invalid response is refused with the reason and records nothing.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from decimal import Decimal
from typing import Any

from assay._errors import InvalidInput
from assay._signed import canonical_json
from assay._strict import StrictJSONError, loads_strict
from assay.checks import validate_json
from assay.review._protocol import ReviewNode
from assay.status import Status

CITATIONS = "citations"
"""The response field whose URIs must each name a material the seat showed."""
ASSISTANCE = "assistance"
"""The reserved top-level key holding the declaration of assistance (taken out before the
response is checked against the node's schema)."""
SCHEMA_TIMEOUT = 5.0
LARGEST = 10**308
"""The largest number a response's top-level field may hold (what a reducer can compare)."""


def written_numbers(data: bytes, response: dict[str, Any]) -> dict[str, str]:
    """The response's top-level decimal numbers as written, where the parsed value is not
    that number (``0.79999999999999999999`` reads as the float 0.8): a reducer compares the
    number the reviewer wrote, never its rounding. ``data`` already passed ``check_response``."""
    texts = json.loads(data, parse_float=str)
    if not isinstance(texts, dict):
        return {}
    found = {}
    for key, value in response.items():
        text = texts.get(key)
        if (
            isinstance(value, float)
            and isinstance(text, str)
            and Decimal(text) != Decimal(repr(value))
        ):
            found[key] = text
    return found


def check_response(
    node: ReviewNode, name: str, data: bytes, shown: Collection[str]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """``(response, assistance)`` from a response file; InvalidInput (where ``--file``) naming
    the field otherwise."""
    try:
        document = loads_strict(data)
    except (StrictJSONError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"not strict JSON: {exc}", where="--file") from None
    if not isinstance(document, dict):
        raise InvalidInput("a response is a JSON object", where="--file")
    for key, value in document.items():  # what a reducer reads: a number it can hold
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > LARGEST:
            raise InvalidInput(
                f"{key}: a number of {len(str(abs(value)))} digits is out of range (at most "
                "1e308 in size)",
                where="--file",
            )
    assistance = _assistance(node, document.pop(ASSISTANCE, None), ASSISTANCE in document)
    text = canonical_json(document)
    outcome = validate_json(
        canonical_json(node.response_schema).encode(),
        text,
        timeout=SCHEMA_TIMEOUT,
        schema_name=f"node {name!r}'s response schema",
        document_name="the response",
    )
    if outcome.status is not Status.VERIFIED:
        raise InvalidInput(outcome.detail, where="--file")
    cited = document.get(CITATIONS)
    if cited is not None:
        if not isinstance(cited, list):
            raise InvalidInput("citations: must be a list of material URIs", where="--file")
        for i, uri in enumerate(cited):
            if uri not in shown:
                raise InvalidInput(
                    f"citations[{i}]: {uri!r} is not a material this seat showed (cite the "
                    "URIs 'assay review claim' listed)",
                    where="--file",
                )
    return document, assistance


def _assistance(node: ReviewNode, raw: Any, given: bool) -> list[dict[str, str]]:
    rule = node.assistance
    if raw is None:
        if rule.required:
            raise InvalidInput(
                'assistance: declare it ({"assistance": [{"agent": ..., "role": ...}]}, or [] '
                "for none)",
                where="--file",
            )
        return []
    if not isinstance(raw, list):
        raise InvalidInput("assistance: must be a list of {agent, role}", where="--file")
    found: list[dict[str, str]] = []
    for i, item in enumerate(raw):
        if (
            not isinstance(item, dict)
            or set(item) != {"agent", "role"}
            or not all(isinstance(v, str) and v.strip() for v in item.values())
        ):
            raise InvalidInput(
                f'assistance[{i}]: must be {{"agent": name, "role": text}}, both non-empty',
                where="--file",
            )
        if rule.agents is not None and item["agent"] not in rule.agents:
            raise InvalidInput(
                f"assistance[{i}].agent: {item['agent']!r} is not an acceptable agent here "
                f"(acceptable: {', '.join(rule.agents) or 'none'})",
                where="--file",
            )
        found.append({"agent": item["agent"], "role": item["role"]})
    if not found and not rule.unassisted:
        raise InvalidInput(
            "assistance: this node does not accept unassisted review; declare the agent",
            where="--file",
        )
    return found
