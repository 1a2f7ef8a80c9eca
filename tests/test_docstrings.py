"""Every public definition says why it exists: a docstring on each public class, function and
method under src/ (public: a name without a leading underscore, in a class without one)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "assay"
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
WITHOUT = {
    "assay/sandbox/_proxy.py: Remote": "a candidate handle has no names of its own: its "
    "__doc__ must be the candidate object's, read across the boundary",
}
"""Definitions that must not have a docstring, and why."""


def undocumented(source: str) -> list[str]:
    """Qualified names of the public definitions in ``source`` that have no docstring."""
    missing = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, Definition) or node.name.startswith("_"):
                continue
            if ast.get_docstring(node) is None:
                missing.append(prefix + node.name)
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return missing


def test_the_reader_finds_a_missing_docstring() -> None:
    source = (
        "def a():\n    '''Why.'''\n"
        "def b():\n    pass\n"
        "class C:\n    def m(self):\n        pass\n    def _private(self):\n        pass\n"
        "def _hidden():\n    pass\n"
    )
    assert undocumented(source) == ["b", "C", "C.m"]


def test_every_public_definition_has_a_docstring() -> None:
    missing = [
        f"{path.relative_to(SRC.parent)}: {name}"
        for path in sorted(SRC.rglob("*.py"))
        for name in undocumented(path.read_text())
        if f"{path.relative_to(SRC.parent)}: {name}" not in WITHOUT
    ]
    assert not missing, "public definitions without a docstring:\n" + "\n".join(missing)
