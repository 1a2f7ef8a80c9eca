"""Workspaces are paths on the server, and only under ``--workspace-root``: with no root an item
naming a path is refused; under a root, a path that leaves it (``..``, absolute, a symlink out)
is that item's error, and nothing at the path is read or quoted."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

Client = Callable[..., TestClient]
CHECK = {"kind": "file_equals", "path": "out.txt", "value": "42"}


def _one(client: TestClient, item: dict[str, Any]) -> dict[str, Any]:
    reply = client.post("/v1/verify", json={"items": [{"id": "w", **item}]})
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["results"][0]
    return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "ws").mkdir(parents=True)
    (tmp_path / "root" / "ws" / "out.txt").write_text("42")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "out.txt").write_text("42")
    os.symlink(tmp_path / "outside", tmp_path / "root" / "out")
    return tmp_path / "root"


def test_a_workspace_under_the_root_is_judged(client: Client, root: Path) -> None:
    result = _one(client(workspace_root=root), {"checks": [CHECK], "workspace": "ws"})
    assert result["status"] == "verified"


def test_without_a_root_no_path_is_read(client: Client, root: Path) -> None:
    result = _one(client(), {"checks": [CHECK], "workspace": str(root / "ws")})
    assert result["status"] == "error"
    assert "items[0].workspace" in result["outcomes"][0]["detail"]
    assert "no workspace root is configured" in result["outcomes"][0]["detail"]


@pytest.mark.parametrize("workspace", ["..", "../outside", "ws/../../outside", "out", "/tmp"])
def test_a_workspace_outside_the_root_is_refused(
    client: Client, root: Path, workspace: str
) -> None:
    result = _one(client(workspace_root=root), {"checks": [CHECK], "workspace": workspace})
    assert result["status"] == "error" and result["reward"] is None
    assert "items[0].workspace" in result["outcomes"][0]["detail"]


def test_the_task_workspace_obeys_the_same_root(client: Client, root: Path) -> None:
    task = {"checks": [CHECK], "workspace": "../outside"}
    result = _one(client(workspace_root=root), {"task": task})
    assert result["status"] == "error"
    assert "items[0].task.workspace" in result["outcomes"][0]["detail"]
