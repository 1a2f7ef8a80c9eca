"""Two roots: workspaces under ``--workspace-root``, verifier-side files under ``--verifier-root``,
so no item can name the verifier's folder as its workspace and read a sealed file back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from starlette.testclient import TestClient

from assay.service import Settings, create_app

SECRET = "SEALED-7f3a"


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    workspaces, verifier = tmp_path / "workspaces", tmp_path / "verifier"
    (workspaces / "ep-1").mkdir(parents=True)
    (workspaces / "ep-1" / "order.json").write_text('{"id": 7}')
    verifier.mkdir()
    (verifier / "order.schema.json").write_text('{"type": "object", "required": ["id"]}')
    (verifier / "answers.json").write_text(json.dumps({"q1": SECRET}))
    return workspaces, verifier


def _results(roots: tuple[Path, Path], *items: dict[str, Any]) -> list[dict[str, Any]]:
    settings = Settings(workspace_root=roots[0], verifier_root=roots[1])
    with TestClient(create_app(settings)) as client:
        reply = client.post("/v1/verify", json={"items": list(items)})
    assert reply.status_code == 200, reply.text
    assert SECRET not in reply.text
    return list(reply.json()["results"])


def test_a_workspace_and_a_verifier_file_each_from_their_own_root(roots: tuple[Path, Path]) -> None:
    check = {"kind": "json_schema", "artifact": "order.json", "schema": "order.schema.json"}
    (result,) = _results(roots, {"id": "a", "workspace": "ep-1", "checks": [check]})
    assert result["status"] == "verified"


@pytest.mark.parametrize("workspace", ["../verifier", "ep-1/../../verifier", "."])
def test_the_verifier_root_is_never_a_workspace(roots: tuple[Path, Path], workspace: str) -> None:
    check = {"kind": "file_json", "path": "answers.json", "value": None}
    (result,) = _results(roots, {"id": "a", "workspace": workspace, "checks": [check]})
    assert result["status"] in ("error", "refuted")


def test_a_verifier_file_is_never_read_from_the_workspaces(roots: tuple[Path, Path]) -> None:
    check = {"kind": "json_schema", "artifact": "order.json", "schema": "../workspaces/ep-1/x"}
    (result,) = _results(roots, {"id": "a", "workspace": "ep-1", "checks": [check]})
    assert result["status"] == "error"


def test_a_verifier_root_needs_a_workspace_root(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="workspace_root"):
        Settings(verifier_root=tmp_path)
