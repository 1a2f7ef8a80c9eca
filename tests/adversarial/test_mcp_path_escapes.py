"""MCP tool arguments that name a file outside the workspace root: every one is refused before
anything is read, and the refusal never shows what lies there.

The ``check`` tool's item can name paths in its workspace and in each check's verifier-side
fields (a ``sql_query`` database, a ``program`` checker and its references, a hidden check's
``file``, a schema, a formula, a proof obligation); ``fill_hole`` and ``goal`` name an Agda file.
Each escape is tried by ``..``, by an absolute path, by a symlink inside the root that leads out,
and on a server with no root at all. A file kind's ``path`` that climbs out of the workspace is a
refutation (the kind's own rule), never ``verified`` and never the outside file's content.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay import Config, InvalidInput
from assay.mcp import Toolbox

SECRET = "SECRET-7f3a"
CONFIG = Config()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ (the server's root, with a workspace ws/ and a database) beside outside/ (a
    secret, a database, an Agda file), and links in the root that lead out."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "ws").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "Sym.agda").write_text("module Sym where\n\nx : Set\nx = {! !}\n")
    connection = sqlite3.connect(outside / "o.sqlite")
    connection.execute("create table t(x)")
    connection.execute("insert into t values (?)", (SECRET,))
    connection.commit()
    connection.close()
    (root / "ws" / "a.txt").write_text("x")
    (root / "out").symlink_to(outside)
    (root / "secret.txt").symlink_to(outside / "secret.txt")
    (root / "zero").symlink_to("/dev/zero")
    (root / "ws" / "out").symlink_to(outside)
    os.mkfifo(root / "fifo.agda")
    return tmp_path


def _sql(database: str) -> dict[str, Any]:
    return {
        "checks": [
            {
                "kind": "sql_query",
                "database": database,
                "query": "select x from t",
                "compare": "answer_value",
            }
        ],
        "answer": SECRET,
    }


ESCAPES: dict[str, dict[str, Any]] = {
    "workspace ..": {
        "checks": [{"kind": "file_exists", "path": "secret.txt"}],
        "workspace": "../outside",
    },
    "workspace absolute": {
        "checks": [{"kind": "file_exists", "path": "secret.txt"}],
        "workspace": "{outside}",
    },
    "workspace symlink": {
        "checks": [{"kind": "file_exists", "path": "secret.txt"}],
        "workspace": "out",
    },
    "task.workspace symlink": {
        "task": {"checks": [{"kind": "file_exists", "path": "secret.txt"}], "workspace": "out"}
    },
    "sql database ..": _sql("../outside/o.sqlite"),
    "sql database absolute": _sql("{outside}/o.sqlite"),
    "sql database symlink": _sql("out/o.sqlite"),
    "sql database in task": {"task": _sql("out/o.sqlite")},
    "program checker": {
        "checks": [{"kind": "program", "checker": "out/secret.txt", "artifacts": {"a": "a.txt"}}],
        "workspace": "ws",
    },
    "program references": {
        "checks": [
            {
                "kind": "program",
                "checker": "checker.py",
                "references": {"r": "secret.txt"},
                "artifacts": {"a": "a.txt"},
            }
        ],
        "workspace": "ws",
    },
    "hidden_python file": {"checks": [{"kind": "hidden_python", "file": "out/secret.txt"}]},
    "json_schema schema": {
        "checks": [{"kind": "json_schema", "artifact": "a.txt", "schema": "secret.txt"}],
        "workspace": "ws",
    },
    "sat formula": {
        "checks": [
            {"kind": "sat_assignment", "artifact": "a.txt", "formula": "../outside/secret.txt"}
        ],
        "workspace": "ws",
    },
    "agda obligation": {
        "checks": [{"kind": "agda", "obligation": "out/Sym.agda", "stdlib": False}],
        "answer": "Set",
    },
    "coq obligation": {
        "checks": [
            {"kind": "coq", "obligation": "{outside}/X.v", "statement": "True", "name": "x"}
        ],
        "answer": "I",
    },
}


def _filled(value: Any, outside: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{outside}", str(outside))
    if isinstance(value, list):
        return [_filled(v, outside) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, outside) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", list(ESCAPES))
def test_a_path_out_of_the_root_is_refused_unread(tree: Path, case: str) -> None:
    arguments = _filled(ESCAPES[case], tree / "outside")
    with pytest.raises(InvalidInput) as refused:
        Toolbox(root=tree / "root", config=CONFIG).check(arguments)
    assert re.search(r"inside the root|outside the root", str(refused.value))  # for the path
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize("case", list(ESCAPES))
def test_without_a_root_no_path_is_read(tree: Path, case: str) -> None:
    with pytest.raises(InvalidInput, match="no workspace root"):
        Toolbox(root=None, config=CONFIG).check(_filled(ESCAPES[case], tree / "outside"))


@pytest.mark.parametrize(
    "path", ["../../outside/secret.txt", "{outside}/secret.txt", "out/secret.txt"]
)
@pytest.mark.parametrize("kind", ["file_contains", "file_equals", "file_exists"])
def test_a_file_check_climbing_out_of_the_workspace_never_passes(
    tree: Path, kind: str, path: str
) -> None:
    check: dict[str, Any] = {"kind": kind, "path": _filled(path, tree / "outside")}
    if kind != "file_exists":
        check["value"] = SECRET
    result = Toolbox(root=tree / "root", config=CONFIG).check(
        {"checks": [check], "workspace": "ws"}
    )
    assert result["status"] == "refuted", result
    assert SECRET not in str(result)


HOLE_FILES = {
    "..": "../outside/Sym.agda",
    "absolute": "{outside}/Sym.agda",
    "symlink to a folder out": "out/Sym.agda",
    "symlink to a file out": "secret.txt",
    "symlink to /dev/zero": "zero",
    "a FIFO": "fifo.agda",
    "a folder": "ws",
    "NUL byte": "ws/a.txt\x00",
    "empty": "",
    "backslash": "..\\outside\\Sym.agda",
}


@pytest.mark.parametrize("tool", ["fill_hole", "goal"])
@pytest.mark.parametrize("case", list(HOLE_FILES))
def test_a_hole_file_out_of_the_root_is_refused_unread(tree: Path, tool: str, case: str) -> None:
    """Refused by the argument reader itself, before Agda is started (a FIFO would block, and
    /dev/zero never ends)."""
    arguments: dict[str, Any] = {
        "file": _filled(HOLE_FILES[case], tree / "outside"),
        "line": 4,
        "column": 5,
    }
    if tool == "fill_hole":
        arguments["candidate"] = "Set"
    toolbox = Toolbox(root=tree / "root", config=CONFIG)
    with pytest.raises(InvalidInput) as refused:
        getattr(toolbox, tool)(arguments)
    assert refused.value.where == "file"
    assert SECRET not in str(refused.value)
    assert toolbox._lanes == {}  # no Agda was started for it


@pytest.mark.parametrize("tool", ["fill_hole", "goal"])
def test_no_hole_file_is_read_without_a_root(tree: Path, tool: str) -> None:
    arguments: dict[str, Any] = {"file": "ws/a.txt", "line": 1, "column": 1, "candidate": "x"}
    if tool == "goal":
        del arguments["candidate"]
    with pytest.raises(InvalidInput, match="without --workspace-root"):
        getattr(Toolbox(root=None, config=CONFIG), tool)(arguments)
