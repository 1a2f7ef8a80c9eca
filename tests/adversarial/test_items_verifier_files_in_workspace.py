"""Items whose verifier-side file lies in the agent's workspace: the work writes what judges it.

An item names its workspace and, in its checks, verifier-side files (a hidden check's ``file``, a
``sql_query`` database, a proof ``obligation``, a schema, a formula, a checker and its
references), all relative to the one workspace root. An environment that copies a task's inputs
into the agent's folder and names them in the label (``database: ep-7/data.sqlite``) hands the
agent the verifier's copy: it rewrites the database, the obligation or the hidden check, and its
wrong work is ``verified``. ``program``, ``json_schema`` and ``sat_assignment`` refuse such a file
(``error``) when they run; ``hidden_python``, ``sql_query`` and the proof kinds read it. The item
layer should refuse every one of them, naming the field, before anything runs (a workspace that
is the root itself holds every verifier-side file).

The candidate's files below are wrong work for the task the label meant: each would be
``refuted`` (or never reach ``verified``) if the verifier read its own copy.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.episodes import judge_item

CONFIG = Config()


def _database(path: Path) -> None:
    """The candidate's own database: the verifier's query now returns the candidate's value."""
    connection = sqlite3.connect(path)
    connection.execute("create table t(x)")
    connection.execute("insert into t values ('WRONG')")
    connection.commit()
    connection.close()


def _text(text: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_text(text)

    return write


def _link(target: str) -> Callable[[Path], None]:
    """A link the operator made (task inputs shared with the agent): resolved, it is the
    workspace."""

    def make(path: Path) -> None:
        os.symlink(target, path)

    return make


# (files the candidate wrote, relative to the root) and the item, with the answer it gives.
CASES: dict[str, tuple[dict[str, Callable[[Path], None]], dict[str, Any]]] = {
    "sql_query database in the workspace": (
        {"ws/data.sqlite": _database},
        {
            "workspace": "ws",
            "answer": "WRONG",
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "ws/data.sqlite",
                    "query": "select x from t",
                    "compare": "answer_value",
                }
            ],
        },
    ),
    "sql_query database, the workspace is the root": (
        {"data.sqlite": _database},
        {
            "workspace": ".",
            "answer": "WRONG",
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "data.sqlite",
                    "query": "select x from t",
                    "compare": "answer_value",
                }
            ],
        },
    ),
    "sql_query database, the workspace is '' (the root)": (
        {"data.sqlite": _database},
        {
            "workspace": "",
            "answer": "WRONG",
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "data.sqlite",
                    "query": "select x from t",
                    "compare": "answer_value",
                }
            ],
        },
    ),
    "sql_query database linked into the workspace": (
        {"ws/data.sqlite": _database, "inputs": _link("ws")},
        {
            "workspace": "ws",
            "answer": "WRONG",
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "inputs/data.sqlite",
                    "query": "select x from t",
                    "compare": "answer_value",
                }
            ],
        },
    ),
    "hidden_python file in the workspace": (
        {"ws/hidden_check.py": _text("pass\n")},
        {"workspace": "ws", "checks": [{"kind": "hidden_python", "file": "ws/hidden_check.py"}]},
    ),
    "agda obligation in the workspace": (
        {
            "ws/Ob.agda": _text(
                "module Ob where\n\nopen import Agda.Builtin.Nat\n\nx : Nat\nx = {! !}\n"
            )
        },
        {
            "workspace": "ws",
            "answer": "zero",
            "checks": [{"kind": "agda", "obligation": "ws/Ob.agda", "stdlib": False}],
        },
    ),
    # The kinds that already refuse it when they run (regressions): error, never a verdict.
    "json_schema schema in the workspace": (
        {"ws/schema.json": _text("{}"), "ws/doc.json": _text('"anything"')},
        {
            "workspace": "ws",
            "checks": [{"kind": "json_schema", "artifact": "doc.json", "schema": "ws/schema.json"}],
        },
    ),
    "sat formula in the workspace": (
        {"ws/f.cnf": _text("p cnf 1 1\n1 0\n"), "ws/a.txt": _text("v 1 0\n")},
        {
            "workspace": "ws",
            "checks": [{"kind": "sat_assignment", "formula": "ws/f.cnf", "artifact": "a.txt"}],
        },
    ),
    "program references in the workspace": (
        {"ws/ref.txt": _text("candidate's reference"), "ws/out.txt": _text("x")},
        {
            "workspace": "ws",
            "checks": [
                {
                    "kind": "program",
                    "command": ["true"],
                    "artifacts": {"out": "out.txt"},
                    "references": {"expected": "ws/ref.txt"},
                }
            ],
        },
    ),
    "program references folder holds the workspace": (
        {"ws/out.txt": _text("x")},
        {
            "workspace": "ws",
            "checks": [
                {
                    "kind": "program",
                    "command": ["true"],
                    "artifacts": {"out": "out.txt"},
                    "references": {"everything": "."},
                }
            ],
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_verifier_file_in_the_workspace_is_refused(tmp_path: Path, case: str) -> None:
    files, body = CASES[case]
    root = tmp_path / "root"
    (root / "ws").mkdir(parents=True)
    for name, write in files.items():
        write(root / name)
    got = judge_item({"id": "ep", **body}, root=root, config=CONFIG, where="items[0]")
    assert got.status is not Status.VERIFIED, f"the candidate's own {case} decided the verdict"
    assert got.status is Status.ERROR and got.reward is None, got.outcomes[0].detail
