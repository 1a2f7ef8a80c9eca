"""The public surface is deliberate: pinned here so nothing is exported by accident."""

from __future__ import annotations

import subprocess
import sys

import assay
import assay.checks
import assay.sandbox
import assay.status


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
    for module in (assay, assay.checks, assay.sandbox, assay.status):
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
