"""Every kind says which of its fields name verifier-side files and which name workspace paths.

The platform trusts these declarations to refuse a contract whose check names an undeclared
reference key or artifact role, and to know which checks read a sealed reference; a kind that
forgets one would let a check read a file nobody declared. The table below must name every
registered kind, so a new kind cannot be added without deciding.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from assay import all_kinds, build_check
from assay.checks._spec import NonBlank, Spec

DECLARED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "agda": (("obligation",), ("file",)),
    "answer_contains": ((), ()),
    "answer_equals": ((), ()),
    "answer_key": ((), ()),
    "answer_math": ((), ()),
    "answer_number": ((), ()),
    "answer_one_of": ((), ()),
    "answer_regex": ((), ()),
    "coq": (("obligation",), ("file",)),
    "file_absent": ((), ("path",)),
    "file_contains": ((), ("path",)),
    "file_equals": ((), ("path",)),
    "file_exists": ((), ("path",)),
    "file_json": ((), ("path",)),
    "hidden_python": (("file",), ()),
    "json_schema": (("schema_",), ("artifact",)),
    "lean": (("obligation",), ("file",)),
    "program": (("checker", "references", "fixtures", "held_back_fixtures"), ("artifacts",)),
    "python": ((), ()),
    "sat_assignment": (("formula",), ("artifact",)),
    "shell": ((), ()),
    "sql_query": (("database",), ()),
    "web_receipt": ((), ()),
}


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda k: k.name)
def test_declarations_name_real_fields_of_the_spec(kind: Any) -> None:
    spec = kind.spec
    fields = set(spec.model_fields)
    assert set(spec.verifier_fields) <= fields, spec.verifier_fields
    assert set(spec.workspace_fields) <= fields, spec.workspace_fields
    assert not set(spec.verifier_fields) & set(spec.workspace_fields)
    assert kind.name in DECLARED, f"decide which fields of {kind.name!r} name files"
    assert (spec.verifier_fields, spec.workspace_fields) == DECLARED[kind.name]


def test_the_table_names_only_registered_kinds() -> None:
    assert set(DECLARED) == {k.name for k in all_kinds()}


def test_a_declaration_naming_no_field_fails_when_the_kind_is_defined() -> None:
    with pytest.raises(TypeError, match=r"declares file fields it does not have: \['nope'\]"):

        class Broken(Spec):
            verifier_fields = ("nope",)
            path: NonBlank

    class Fine(Spec):
        verifier_fields = ("a", "b", "c")
        workspace_fields = ("d",)
        a: str | None = None
        b: list[str] = Field(default_factory=list)
        c: dict[str, str] = Field(default_factory=dict)
        d: str = "x"

    spec = Fine(a="one", b=["two", "three"], c={"k": "four"})
    assert spec.verifier_files() == ["one", "two", "three", "four"]
    assert spec.workspace_files() == ["x"]
    assert Fine().verifier_files() == []


BUILT: list[tuple[dict[str, Any], list[str], list[str]]] = [
    (
        {
            "kind": "program",
            "checker": "checkers/sat",
            "fixtures": "fx",
            "held_back_fixtures": "held",
            "artifacts": {"assignment": "assignment", "log": "out/log.txt"},
            "references": {"formula": "formula", "labels": "labels"},
        },
        ["checkers/sat", "formula", "labels", "fx", "held"],
        ["assignment", "out/log.txt"],
    ),
    ({"kind": "program", "command": ["true"]}, [], []),
    ({"kind": "hidden_python", "file": "hidden/check.py"}, ["hidden/check.py"], []),
    ({"kind": "hidden_python", "code": "assert True"}, [], []),
    (
        {"kind": "sql_query", "database": "data/shop.sqlite", "query": "SELECT 1", "rows": [[1]]},
        ["data/shop.sqlite"],
        [],
    ),
    ({"kind": "agda", "obligation": "Hole.agda"}, ["Hole.agda"], []),
    ({"kind": "coq", "file": "Proof.v", "statement": "1 = 1", "name": "one"}, [], ["Proof.v"]),
    ({"kind": "file_exists", "path": "out/result.txt"}, [], ["out/result.txt"]),
    ({"kind": "file_json", "path": "r.json", "value": 1}, [], ["r.json"]),
    ({"kind": "file_contains", "path": "log.txt", "value": "ok"}, [], ["log.txt"]),
    (
        {"kind": "json_schema", "artifact": "order", "schema": "order_schema"},
        ["order_schema"],
        ["order"],
    ),
    (
        {"kind": "sat_assignment", "artifact": "assignment", "formula": "formula"},
        ["formula"],
        ["assignment"],
    ),
    ({"kind": "answer_number", "value": 3}, [], []),
    ({"kind": "shell", "code": "true"}, [], []),
    ({"kind": "web_receipt"}, [], []),
]


@pytest.mark.parametrize(("raw", "verifier", "workspace"), BUILT, ids=lambda x: str(x)[:40])
def test_a_built_spec_returns_its_files(
    raw: dict[str, Any], verifier: list[str], workspace: list[str]
) -> None:
    spec = build_check(raw).spec
    assert spec.verifier_files() == verifier
    assert spec.workspace_files() == workspace
