"""assay: decide whether a result is correct, say exactly what was checked, refuse to be talked into a pass.

``import assay`` stays light: no typer, rich, sympy or pint is imported until a command or a
unit check needs it. This module is the facade: the names a caller needs, re-exported from the
layers below (see docs/architecture.md); the version lives in ``assay._version``.
"""

from assay._config import Config
from assay._errors import AssayError, InvalidInput, InvalidSpec, SandboxUnavailable
from assay._version import __version__
from assay.checks import (
    AnswerKeyScore,
    Check,
    CheckContext,
    Receipt,
    Task,
    all_kinds,
    build_check,
    build_checks,
    check_task,
    load_task,
    run_checks,
    score_answers,
    verify,
)
from assay.status import Mode, Outcome, Report, Status, combine

__all__ = [
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
