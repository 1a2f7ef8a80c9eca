"""The public surface is deliberate: pinned here so nothing is exported by accident."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import assay
import assay._errors
import assay.checks
import assay.proofs
import assay.sandbox
import assay.status

PACKAGES = (assay, assay.checks, assay.proofs, assay.sandbox, assay.status)
GROUND = ("_config", "_errors", "_files", "_signed", "_strict", "_version", "_wire")


def test_top_level_exports_are_pinned() -> None:
    assert assay.__all__ == [
        "AnswerKeyScore",
        "AssayError",
        "Check",
        "CheckContext",
        "Config",
        "InvalidInput",
        "InvalidSpec",
        "Mode",
        "Outcome",
        "Receipt",
        "Report",
        "SandboxUnavailable",
        "Status",
        "Task",
        "__version__",
        "all_kinds",
        "build_check",
        "build_checks",
        "check_task",
        "combine",
        "load_task",
        "run_checks",
        "score_answers",
        "verify",
    ]


def test_every_all_is_sorted_and_resolvable() -> None:
    for module in PACKAGES:
        assert module.__all__ == sorted(module.__all__), module.__name__
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_import_assay_stays_light() -> None:
    code = (
        "import sys, assay; assay.verify({'outputs': {}}, {}); "
        "print(sorted(m for m in ('typer', 'rich', 'pint', 'sympy', 'fastapi', 'sqlalchemy', 'click')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_errors_share_one_root() -> None:
    assert issubclass(assay.InvalidSpec, assay.InvalidInput)
    assert issubclass(assay.InvalidInput, assay.AssayError)
    assert issubclass(assay.AssayError, Exception)


def _exceptions(module: ModuleType) -> dict[str, type[BaseException]]:
    """The exception classes a package exports, or a ground module defines."""
    names = getattr(module, "__all__", None) or [
        name
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module.__name__
    ]
    return {
        f"{module.__name__}.{name}": value
        for name in names
        if inspect.isclass(value := getattr(module, name)) and issubclass(value, BaseException)
    }


def test_every_error_a_caller_can_meet_is_in_the_tree_and_its_drawing() -> None:
    modules = [*PACKAGES, *(importlib.import_module(f"assay.{name}") for name in GROUND)]
    found = {k: v for module in modules for k, v in _exceptions(module).items()}
    assert "assay.sandbox.StagingTooLarge" in found and "assay._strict.StrictJSONError" in found
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, assay.AssayError))
    assert outside == []
    drawing = assay._errors.__doc__ or ""
    undrawn = sorted({cls.__name__ for cls in found.values()} - set(drawing.split()))
    assert undrawn == []


def _package(relative: Path) -> str:
    """``checks`` for ``checks/_engine.py``; ``assay`` for a ground module such as ``_errors.py``."""
    return "assay" if len(relative.parts) == 1 else relative.parts[0]


def _exception_classes() -> dict[str, tuple[str, list[str]]]:
    """Every class under src/assay whose base reads as an exception: name -> (package, bases)."""
    src = Path(assay.__file__).parent
    found: dict[str, tuple[str, list[str]]] = {}
    for path in src.rglob("*.py"):
        package = _package(path.relative_to(src))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
                if any(b.endswith(("Error", "Exception", "Exit", "Unavailable")) for b in bases):
                    found[node.name] = (package, bases)
    return found


def test_an_error_outside_the_tree_never_leaves_its_package() -> None:
    """What is not an AssayError is raised and caught inside one package (as _errors says)."""
    classes = _exception_classes()
    tree = {"AssayError"}
    while grown := {n for n, (_, bases) in classes.items() if tree & set(bases)} - tree:
        tree |= grown
    outside = {name: package for name, (package, _) in classes.items() if name not in tree}
    assert {"CgroupError", "PatternTimeout", "AgdaLexError"} <= set(outside)
    drawing = set((assay._errors.__doc__ or "").replace("``", " ").split())
    src = Path(assay.__file__).parent
    leaks = []
    for path in src.rglob("*.py"):
        package = _package(path.relative_to(src))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    home = outside.get(alias.name)
                    if home is not None and home != package and not alias.name.startswith("_"):
                        leaks.append(f"{path.relative_to(src)} imports {alias.name} ({home})")
    assert leaks == []
    assert sorted(n for n in outside if not n.startswith("_") and n not in drawing) == []
