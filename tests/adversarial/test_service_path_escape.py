"""Path escapes through the reward service: an item (or an OpenRLHF label) that names a file
outside ``--workspace-root``, directly, with ``..``, absolutely, or through a symlink, is
refused or judged without reading it; no verdict is verified on such a file, and its contents
never appear in any answer (``SECRET`` is checked against the whole response text)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from assay.service import Settings, create_app

SECRET = "TOPSECRET-7431"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "schema.json").write_text(json.dumps({"const": SECRET}))
    (outside / "f.cnf").write_text(f"c {SECRET}\np cnf 1 1\n1 0\n")
    with sqlite3.connect(outside / "db.sqlite") as db:
        db.execute("create table t (v text)")
        db.execute("insert into t values (?)", (SECRET,))
    root = tmp_path / "root"
    (root / "ws").mkdir(parents=True)
    os.symlink(outside / "secret.txt", root / "ws" / "leak")
    os.symlink(outside / "db.sqlite", root / "db.sqlite")
    os.symlink(outside / "schema.json", root / "schema.json")
    os.symlink(outside / "f.cnf", root / "f.cnf")
    os.symlink(outside, root / "door")
    (root / "ws" / "a.json").write_text(json.dumps(SECRET))
    (root / "ws" / "sat.txt").write_text("v 1 0\n")
    return root


@pytest.fixture
def client(root: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(workspace_root=root))) as test_client:
        yield test_client


def _outside(root: Path) -> str:
    return str(root.parent / "outside")


ATTACKS: list[Any] = [
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
            "workspace": "../outside",
        },
        id="workspace-dotdot",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
            "workspace": _outside(r),
        },
        id="workspace-absolute",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
            "workspace": "door",
        },
        id="workspace-symlink-out",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "leak", "value": SECRET}],
            "workspace": "ws",
        },
        id="file-symlink-out-of-the-workspace",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_contains", "path": "leak", "pattern": "TOPSECRET"}],
            "workspace": "ws",
        },
        id="file-contains-through-a-symlink",
    ),
    pytest.param(
        lambda r: {
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "db.sqlite",
                    "query": "select v from t",
                    "rows": [[SECRET]],
                }
            ]
        },
        id="sql-database-symlink-out",
    ),
    pytest.param(
        lambda r: {
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "../outside/db.sqlite",
                    "query": "select v from t",
                    "compare": "answer_value",
                }
            ],
            "answer": "x",
        },
        id="sql-database-dotdot",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "json_schema", "artifact": "a.json", "schema": "schema.json"}],
            "workspace": "ws",
        },
        id="json-schema-symlink-out",
    ),
    pytest.param(
        lambda r: {
            "checks": [
                {
                    "kind": "json_schema",
                    "artifact": "a.json",
                    "schema": _outside(r) + "/schema.json",
                }
            ],
            "workspace": "ws",
        },
        id="json-schema-absolute",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "sat_assignment", "formula": "f.cnf", "artifact": "sat.txt"}],
            "workspace": "ws",
        },
        id="sat-formula-symlink-out",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
            "workspace": "ws\x00/../../outside",
        },
        id="workspace-nul",
    ),
    pytest.param(
        lambda r: {
            "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
            "workspace": "..\\outside",
        },
        id="workspace-backslash",
    ),
    pytest.param(
        lambda r: {
            "task": {
                "checks": [{"kind": "file_equals", "path": "secret.txt", "value": SECRET}],
                "workspace": "../outside",
            }
        },
        id="task-workspace-dotdot",
    ),
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_file_outside_the_root_is_read(client: TestClient, root: Path, attack: Any) -> None:
    reply = client.post("/v1/verify", json={"items": [{"id": "x", **attack(root)}]})
    assert reply.status_code == 200, reply.text
    (result,) = reply.json()["results"]
    assert result["status"] != "verified", result
    assert SECRET not in reply.text


@pytest.mark.parametrize("attack", ATTACKS[:3] + ATTACKS[5:7])
def test_nor_through_an_openrlhf_label(client: TestClient, root: Path, attack: Any) -> None:
    label = json.dumps(attack(root))
    reply = client.post("/get_reward", json={"query": ["p x"], "prompts": ["p"], "labels": [label]})
    assert reply.status_code == 200, reply.text
    assert reply.json()["rewards"] == [0.0]
    assert reply.json()["extra_logs"]["verified"] == [0.0]
    assert SECRET not in reply.text


def test_sandboxed_code_cannot_reach_outside_the_workspace(client: TestClient, root: Path) -> None:
    code = (
        f"data = open({str(root.parent / 'outside' / 'secret.txt')!r}).read()\nassert False, data"
    )
    item = {"id": "x", "checks": [{"kind": "python", "code": code}], "workspace": "ws"}
    reply = client.post("/v1/verify", json={"items": [item]})
    (result,) = reply.json()["results"]
    assert result["status"] != "verified"
    assert SECRET not in reply.text
