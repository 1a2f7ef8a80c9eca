"""``json_schema``: every status, the JSON path of the first failure, and the author's side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Outcome, Status
from tests.helpers import run_kind

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR

ORDER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["id", "items"],
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Z]{2}-\\d+$"},
        "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
        "note": {"type": "string", "maxLength": 10},
        "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
        "size": {"anyOf": [{"type": "integer", "minimum": 10}, {"enum": ["big"]}]},
    },
    "additionalProperties": False,
    "$defs": {
        "item": {
            "type": "object",
            "required": ["price"],
            "properties": {"price": {"type": "number", "minimum": 0}},
            "patternProperties": {"^x-": {"type": "boolean"}},
            "additionalProperties": False,
        }
    },
}
GOOD = {"id": "AB-12", "items": [{"price": 1}, {"price": 2.5, "x-gift": True}]}


def check(
    tmp_path: Path,
    artifact: Any,
    schema: Any = ORDER,
    config: Config | None = None,
) -> Outcome:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    raw = artifact if isinstance(artifact, bytes) else json.dumps(artifact).encode()
    (ws / "order.json").write_bytes(raw)
    schema_raw = schema if isinstance(schema, bytes) else json.dumps(schema).encode()
    (tmp_path / "schema.json").write_bytes(schema_raw)
    return run_kind(
        "json_schema",
        workspace=ws,
        base_dir=tmp_path,
        config=config,
        artifact="order.json",
        schema="schema.json",
    )


def with_(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


ARTIFACTS: list[tuple[Any, Status, str]] = [
    (GOOD, V, "'order.json' is valid against the schema 'schema.json'"),
    (
        with_(items=[{"price": 1}, {"price": 2}, {"price": -1}]),
        R,
        "$.items[2].price: -1 is less than the minimum of 0",
    ),
    ({"items": [{"price": 1}]}, R, "$: 'id' is a required property"),
    ([GOOD], R, "$: [{"),
    (with_(id="ab-12"), R, "$.id: 'ab-12' does not match"),
    (with_(items=[]), R, "$.items: [] should be non-empty"),
    (with_(items=[{"price": "1"}]), R, "$.items[0].price: '1' is not of type 'number'"),
    (with_(items=[{"price": True}]), R, "$.items[0].price: True is not of type 'number'"),
    (
        with_(items=[{"price": 1, "x-gift": 1}]),
        R,
        "$.items[0][\"x-gift\"]: 1 is not of type 'boolean'",
    ),
    (
        with_(items=[{"price": 1, "gift": True}]),
        R,
        "$.items[0]: additional properties are not allowed ('gift')",
    ),
    (with_(extra=1, more=2), R, "$: additional properties are not allowed ('extra', 'more')"),
    (with_(tags={"a.b": "x"}), R, "$.tags[\"a.b\"]: 'x' is not of type 'integer'"),
    (with_(note="far too long a note"), R, "$.note: 'far too long a note' is too long"),
    (with_(size=3), R, "$.size: 3 is not valid under any of the given schemas (closest: "),
    (with_(size=12), V, "is valid"),
    (with_(size="big"), V, "is valid"),
    (b'{"id": "AB-1", "id": "AB-2", "items": [{"price": 1}]}', R, "duplicate key 'id'"),
    (
        b'{"id": "AB-1", "items": [{"price": NaN}]}',
        R,
        "is not strict JSON: NaN is not a JSON value",
    ),
    (b'{"id": "AB-1", "items": [{"price": Infinity}]}', R, "Infinity is not a JSON value"),
    (b'{"id": "AB-1", "items": [{"price": 1e999}]}', R, "beyond the float range"),
    (b'{"id": "AB-1", "items": [{"price": 1}]', R, "is not strict JSON"),
    (b"", R, "is not strict JSON"),
    (b"\xff\xfe{}", R, "is not UTF-8 text"),
]


@pytest.mark.parametrize(("artifact", "status", "detail"), ARTIFACTS, ids=lambda x: str(x)[:40])
def test_artifacts(tmp_path: Path, artifact: Any, status: Status, detail: str) -> None:
    out = check(tmp_path, artifact)
    assert out.status is status, out.detail
    assert detail in out.detail
    if "UTF-8" not in detail:  # a file that cannot be read as text has no JSON to hash
        assert out.evidence is not None and len(out.evidence["schema_sha256"]) == 64
        assert len(out.evidence["artifact_sha256"]) == 64


def test_failure_evidence_names_path_keyword_and_schema_location(tmp_path: Path) -> None:
    out = check(tmp_path, with_(items=[{"price": -1}]))
    assert out.evidence is not None
    assert out.evidence["path"] == "$.items[0].price"
    assert out.evidence["keyword"] == "minimum"
    assert out.evidence["schema_path"].endswith("/properties/price/minimum")


def test_the_first_failure_is_the_same_every_run(tmp_path: Path) -> None:
    bad = with_(items=[{"price": -1}, {"price": "x"}], note="far too long a note", zz=1, aa=2)
    details = {check(tmp_path, bad).detail for _ in range(3)}
    assert len(details) == 1


SCHEMAS: list[tuple[Any, Any, Status, str]] = [
    (b'{"type": "object", "type": "array"}', {}, I, "is not strict JSON: duplicate key 'type'"),
    (b'{"maximum": NaN}', {}, I, "is not strict JSON"),
    (b"not json", {}, I, "is not strict JSON"),
    (["array"], {}, I, "a schema is an object or a boolean, not list"),
    ({"type": "objekt"}, {}, I, "it is not a valid draft 2020-12 schema: at /type"),
    ({"minimum": "0"}, 1, I, "not a valid draft 2020-12 schema"),
    ({"$schema": "http://json-schema.org/draft-07/schema#"}, {}, I, "declares $schema"),
    ({"$ref": "#/$defs/nope"}, {}, I, "its $ref '#/$defs/nope' points to nothing in the schema"),
    ({"$ref": "#nope"}, {}, I, "its $ref '#nope' points to nothing"),
    ({"$ref": "other.json"}, {}, I, "its $ref 'other.json' is not in the schema"),
    (
        {"$defs": {"unused": {"$ref": "https://example.org/s"}}},
        {},
        I,
        "remote references are never fetched",
    ),
    ({"$dynamicRef": "https://example.org/s#meta"}, {}, I, "its $dynamicRef"),
    ({"pattern": "(unclosed"}, "x", I, "at /pattern: '(unclosed' is not a 'regex'"),
    ({"patternProperties": {"[": {}}}, {}, I, "at /patternProperties: '[' is not a 'regex'"),
    (True, {"anything": [1]}, V, "is valid"),
    (False, {}, R, "$: False schema does not allow {}"),
    ({}, [1, "two", None], V, "is valid"),
    (
        {"$schema": "https://json-schema.org/draft/2020-12/schema#", "type": "integer"},
        3,
        V,
        "valid",
    ),
    ({"type": "integer"}, 3.0, V, "valid"),
    ({"type": "string", "format": "email"}, "not an email", V, "valid"),
    ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, {"type": "string"}, V, "valid"),
    ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, {"type": "strin"}, R, "$.type"),
    (
        {
            "$id": "https://example.org/root",
            "$defs": {"a": {"$id": "a", "type": "integer"}},
            "$ref": "a",
        },
        1,
        V,
        "valid",
    ),
    (
        {
            "$id": "https://example.org/root",
            "$defs": {"a": {"$id": "a", "type": "integer"}},
            "$ref": "a",
        },
        "x",
        R,
        "$: 'x' is not of type 'integer'",
    ),
    ({"$id": "https://example.org/root", "$ref": "b"}, 1, I, "'b' is not in the schema"),
    (
        {
            "$defs": {"n": {"$anchor": "node", "type": "array", "items": {"$ref": "#node"}}},
            "$ref": "#node",
        },
        [[[]], [[1]]],
        R,
        "$[1][0][0]: 1 is not of type 'array'",
    ),
    (
        {"type": "object", "unevaluatedProperties": False, "properties": {"a": {}}},
        {"a": 1, "b": 2},
        R,
        "$: Unevaluated properties are not allowed ('b' was unexpected)",
    ),
    (
        {"prefixItems": [{"type": "integer"}], "items": False},
        [1, 2],
        R,
        "$: Expected at most 1 item",
    ),
]


@pytest.mark.parametrize(
    ("schema", "artifact", "status", "detail"), SCHEMAS, ids=lambda x: str(x)[:40]
)
def test_schemas(tmp_path: Path, schema: Any, artifact: Any, status: Status, detail: str) -> None:
    out = check(tmp_path, artifact, schema)
    assert out.status is status, out.detail
    assert detail in out.detail
    if status is I:
        assert out.detail.startswith("the schema 'schema.json' cannot be used: ")


def test_missing_inputs(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "s.json").write_text("{}")
    out = run_kind(
        "json_schema", workspace=tmp_path / "ws", base_dir=tmp_path, artifact="a", schema="s.json"
    )
    assert out.status is R and "'a' does not exist in the workspace" in out.detail
    out = run_kind(
        "json_schema", workspace=tmp_path / "ws", base_dir=tmp_path, artifact="a", schema="t.json"
    )
    assert out.status is I and "the schema 't.json': cannot read" in out.detail
    (tmp_path / "ws" / "a").write_text("{}")
    out = run_kind("json_schema", base_dir=tmp_path, artifact="a", schema="s.json")
    assert out.status is I and "no workspace" in out.detail
    out = run_kind(
        "json_schema",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="../s.json",
        schema="s.json",
    )
    assert out.status is R and "escapes the workspace" in out.detail
    out = run_kind(
        "json_schema", workspace=tmp_path / "ws", base_dir=tmp_path, artifact="a", schema="ws"
    )
    assert out.status is E and "inside the agent's workspace" in out.detail


def test_files_are_capped(tmp_path: Path) -> None:
    small = Config(max_file_bytes=100)
    out = check(tmp_path, {"pad": "x" * 200}, {}, config=small)
    assert out.status is R and "larger than the 100 byte read limit" in out.detail
    out = check(tmp_path, {}, {"description": "x" * 200}, config=small)
    assert out.status is I and "is larger than 100 bytes" in out.detail


def test_a_deeply_nested_artifact_is_refuted_not_an_error(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    out = check(tmp_path, deep, {"items": {"$ref": "#"}})
    assert out.status is R, out.detail
    nested = b"[" * 2000 + b"1" + b"]" * 2000
    out = check(tmp_path, nested, {"items": {"$ref": "#"}})
    assert out.status in (R, V), out.detail
