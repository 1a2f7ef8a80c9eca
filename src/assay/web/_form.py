"""A review response form generated from the node's response schema, and the response read
back from it. The schema stays the judge (``assay.review.check_response``): this only turns
form fields into the JSON document, and places each refusal beside the field it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_AGENTS = 3
"""Rows offered for declaring assistance."""


@dataclass
class Field:
    """One property of the response schema, as a form control."""

    name: str
    kind: str
    """choice, text, number, integer, boolean, uris, lines or json."""
    required: bool
    description: str = ""
    options: list[str] = field(default_factory=list)
    minimum: Any = None
    maximum: Any = None


def fields(schema: dict[str, Any]) -> list[Field]:
    """A control per property, in the schema's order."""
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    properties = schema.get("properties") or {}
    order = [r for r in required if r in properties] + [
        p for p in properties if p not in required
    ]  # the required fields in the author's order (a stored schema's keys are sorted)
    out = []
    for name in order:
        prop = properties[name]
        prop = prop if isinstance(prop, dict) else {}
        kind = "json"
        options: list[str] = []
        if isinstance(prop.get("enum"), list) and all(isinstance(v, str) for v in prop["enum"]):
            kind, options = "choice", list(prop["enum"])
        elif prop.get("type") == "string":
            kind = "text"
        elif prop.get("type") in ("number", "integer", "boolean"):
            kind = str(prop["type"])
        elif prop.get("type") == "array" and (prop.get("items") or {}).get("type") == "string":
            pattern = str((prop.get("items") or {}).get("pattern", ""))
            kind = "uris" if pattern.startswith("^assay://") or name == "citations" else "lines"
        out.append(
            Field(
                name=name,
                kind=kind,
                required=name in required,
                description=str(prop.get("description", "")),
                options=options,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
            )
        )
    return out


def collect(
    schema: dict[str, Any], form: dict[str, list[str]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The response document the form describes, and the fields that could not be read
    (a number that is not one). Empty optional fields are left out."""
    document: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in fields(schema):
        values = form.get(f"field.{f.name}", [])
        value = values[0].strip() if values else ""
        if f.kind in ("uris",):
            if values:
                document[f.name] = [v for v in values if v]
            elif f.required:
                document[f.name] = []
            continue
        if f.kind == "lines":
            document[f.name] = [line.strip() for line in value.splitlines() if line.strip()]
            continue
        if f.kind == "boolean":
            document[f.name] = value == "true"
            continue
        if value == "":
            if f.required:
                document[f.name] = "" if f.kind in ("text", "choice") else None
            continue
        if f.kind in ("number", "integer"):
            try:
                number = float(value) if f.kind == "number" else int(value)
            except ValueError:
                errors[f.name] = (
                    f"{value!r} is not a{'n integer' if f.kind == 'integer' else ' number'}"
                )
                continue
            if f.kind == "number" and float(number).is_integer() and "." not in value:
                number = int(number)
            document[f.name] = number
        elif f.kind == "json":
            import json

            try:
                document[f.name] = json.loads(value)
            except ValueError:
                errors[f.name] = "not JSON"
        else:
            document[f.name] = value.replace("\r\n", "\n")
    return document, errors


def assistance(form: dict[str, list[str]]) -> list[dict[str, str]]:
    """The declaration: empty when the reviewer says they worked unassisted. ValueError, with
    the message shown beside the declaration, when "I was assisted" names no complete agent or
    leaves a row half filled: recording it as unassisted would say what the reviewer did not."""
    if (form.get("assisted") or ["no"])[0] != "yes":
        return []
    agents, roles = form.get("agent", []), form.get("agent_role", [])
    if len(agents) != len(roles):
        raise ValueError("each agent needs what it did, and each role its agent")
    rows = []
    for agent, role in zip(agents, roles, strict=True):
        if not agent.strip() and not role.strip():
            continue  # an empty row of the form
        if not agent.strip() or not role.strip():
            raise ValueError("each agent needs what it did, and each role its agent")
        rows.append({"agent": agent.strip(), "role": role.strip()})
    if not rows:
        raise ValueError("you said you were assisted: name the agent and what it did")
    return rows


_FIELD = re.compile(r"^\$?\.?([A-Za-z_][\w-]*)")


def field_of(message: str, names: set[str]) -> str:
    """Which field a refusal names (``$.citations: ...``, ``assistance[0].agent: ...``);
    ``_form`` when none."""
    text = message.removeprefix("--file: ")
    found = _FIELD.match(text)
    if found and (found.group(1) in names or found.group(1) == "assistance"):
        return found.group(1)
    return "_form"
