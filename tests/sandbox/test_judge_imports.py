"""The judge's helpers import only what a bare interpreter has (every import is paid per check),
and nothing a workspace could provide: the judge's sys.path never holds the workspace."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import assay.sandbox._sandbox as backend

HELPERS = ["_runner", "_proxy", "_candidate", "_tests", "_shellrun"]
TOP_LEVEL = {"builtins", "marshal", "os", "sys"}
# Imported inside a function, only on the path that needs it.
LAZY = {"_ctypes", "_socket", "_thread", "unittest", "traceback", "_imp", "gc"}
# (``_imp`` is loaded by every interpreter at start-up, so importing it costs nothing.)


@pytest.mark.parametrize("name", HELPERS)
def test_a_judge_file_imports_only_builtin_modules(name: str) -> None:
    tree = ast.parse(Path(backend.RUNNER).with_name(f"{name}.py").read_text())
    top = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert top <= TOP_LEVEL
    nested = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert nested - top <= LAZY
    # from-imports only for annotations, under ``if TYPE_CHECKING`` (never executed)
    froms = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert froms <= {"typing", "collections.abc"}
    guarded = [
        n
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for n in block.body
    ]
    assert len(guarded) >= len([n for n in tree.body if isinstance(n, ast.ImportFrom)])
    assert not [n for n in tree.body if isinstance(n, ast.ImportFrom)]


def test_the_candidate_mark_is_one_string_on_both_sides() -> None:
    from assay.sandbox import _proxy
    from assay.sandbox._judge_files import CANDIDATE_MARK

    assert CANDIDATE_MARK.encode() == _proxy.MARK
