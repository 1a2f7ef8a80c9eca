"""What an item can read back: files outside the root (never), and the verifier's own files.

The root is one folder for both sides: the workspaces items name and the verifier-side files their
checks name (answer databases, hidden checks, references, schemas). Paths out of the root are
refused, symlinks followed (the regressions below). But nothing stops an item from naming the
root itself (``"."``, or ``""``), or the folder of verifier-side files, as its *workspace*: the
workspace kinds then read those files and echo them back. ``file_json`` puts the whole document
in its evidence; ``file_equals`` quotes the first differing line; ``file_contains`` is an oracle.
Whoever can send an item (an MCP client is the agent being judged; ``/v1/verify`` has no users
yet) reads every sealed answer and hidden check under the root.

Messages also name the server's absolute paths (``the workspace '/srv/.../x' is not a
directory``): an item should only ever see the paths it sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.episodes import judge_item

CONFIG = Config()
SECRET = "SECRET-ANSWER-7f3a"
OUTSIDE = "OUTSIDE-TEXT-91c2"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "ws").mkdir(parents=True)
    (root / "ws" / "out.txt").write_text("ok")
    (root / "ws" / "doc.json").write_text("{}")
    (root / "sealed").mkdir()
    (root / "sealed" / "answers.json").write_text(json.dumps({"q1": SECRET}))
    (root / "sealed" / "hidden.py").write_text(f"assert answer == {SECRET!r}\n")
    (tmp_path / "outside.json").write_text(json.dumps({"title": OUTSIDE}))
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text(OUTSIDE)
    os.symlink(tmp_path / "outside.json", root / "link.json")
    os.symlink(tmp_path / "outside", root / "ws" / "away")
    os.symlink(tmp_path, root / "up")
    return root


def _judged(root: Path, body: dict[str, Any]) -> tuple[Status, str]:
    got = judge_item({"id": "probe", **body}, root=root, config=CONFIG, where="items[0]")
    return got.status, json.dumps(got.to_json())


READ_BACK: dict[str, dict[str, Any]] = {
    "workspace '.', file_json": {
        "workspace": ".",
        "checks": [{"kind": "file_json", "path": "sealed/answers.json", "value": None}],
    },
    "workspace '', file_json": {
        "workspace": "",
        "checks": [{"kind": "file_json", "path": "sealed/answers.json", "value": None}],
    },
    "workspace '.', file_equals": {
        "workspace": ".",
        "checks": [{"kind": "file_equals", "path": "sealed/hidden.py", "value": "x"}],
    },
}


@pytest.mark.parametrize("case", list(READ_BACK))
def test_an_item_cannot_read_verifier_files_back_through_a_workspace(root: Path, case: str) -> None:
    status, shown = _judged(root, READ_BACK[case])
    assert SECRET not in shown, "a sealed verifier-side file was echoed to the client"
    assert status is Status.ERROR


@pytest.mark.parametrize("workspace", ["sealed", "../sealed", "ws/../sealed", "away/../../sealed"])
def test_with_a_workspace_root_no_verifier_folder_is_a_workspace(
    root: Path, workspace: str
) -> None:
    """With one root, any folder of it may be named as a workspace (the documented limit); with a
    workspace root beside it, the verifier's folders are out of reach."""
    item = {
        "id": "probe",
        "workspace": workspace,
        "checks": [{"kind": "file_json", "path": "answers.json", "value": None}],
    }
    got = judge_item(item, root=root, config=CONFIG, workspaces=root / "ws")
    assert SECRET not in json.dumps(got.to_json())
    assert got.status is Status.ERROR


def test_no_verifier_file_may_lie_in_the_workspace_root(root: Path) -> None:
    schema = {"kind": "json_schema", "artifact": "doc.json", "schema": "ws/doc.json"}
    got = judge_item(
        {"id": "p", "checks": [schema]}, root=root, config=CONFIG, workspaces=root / "ws"
    )
    assert got.status is Status.ERROR
    assert "in the workspace" in got.outcomes[0].detail


OUT_OF_ROOT: dict[str, dict[str, Any]] = {
    "workspace absolute": {"workspace": "/etc", "checks": [{"kind": "file_exists", "path": "x"}]},
    "workspace through a link": {
        "workspace": "up/outside",
        "checks": [{"kind": "file_contains", "path": "f.txt", "value": OUTSIDE}],
    },
    "hidden_python file": {"checks": [{"kind": "hidden_python", "file": "../outside.json"}]},
    "sql_query database": {
        "checks": [
            {"kind": "sql_query", "database": "up/x.sqlite", "query": "select 1", "rows": [[1]]}
        ]
    },
    "json_schema schema": {
        "workspace": "ws",
        "checks": [{"kind": "json_schema", "artifact": "doc.json", "schema": "link.json"}],
    },
    "sat_assignment formula": {
        "workspace": "ws",
        "checks": [{"kind": "sat_assignment", "formula": "/etc/passwd", "artifact": "out.txt"}],
    },
    "program checker": {"checks": [{"kind": "program", "checker": "up/outside"}]},
    "program references": {
        "checks": [{"kind": "program", "command": ["true"], "references": {"k": "up/outside.json"}}]
    },
    "program fixtures": {
        "checks": [{"kind": "program", "command": ["true"], "fixtures": "ws/away"}]
    },
    "program held_back_fixtures": {
        "checks": [{"kind": "program", "command": ["true"], "held_back_fixtures": "../outside"}]
    },
    "agda obligation": {
        "answer": "x",
        "checks": [{"kind": "agda", "obligation": "link.json"}],
    },
    "coq obligation": {
        "answer": "x",
        "checks": [
            {"kind": "coq", "obligation": "up/outside.json", "statement": "True", "name": "p"}
        ],
    },
    "backslash climb": {
        "workspace": "ws\\..\\..",
        "checks": [{"kind": "file_exists", "path": "x"}],
    },
    "NUL in a path": {"checks": [{"kind": "hidden_python", "file": "sealed/hidden.py\x00x"}]},
}


@pytest.mark.parametrize("case", list(OUT_OF_ROOT))
def test_no_field_reads_outside_the_root(root: Path, case: str) -> None:
    """Regression: every verifier-side field and the workspace stay inside the root."""
    status, shown = _judged(root, OUT_OF_ROOT[case])
    assert status is Status.ERROR
    assert OUTSIDE not in shown


@pytest.mark.parametrize(
    "body",
    [
        {"workspace": "missing", "checks": [{"kind": "file_exists", "path": "x"}]},
        {"workspace": "ws/out.txt", "checks": [{"kind": "file_exists", "path": "x"}]},
        {"workspace": "ws", "checks": [{"kind": "file_exists", "path": "a" * 300}]},
    ],
    ids=["missing workspace", "workspace is a file", "name too long"],
)
def test_no_message_names_the_servers_own_paths(root: Path, body: dict[str, Any]) -> None:
    _, shown = _judged(root, body)
    assert str(root.resolve()) not in shown and str(root) not in shown, shown[:400]
