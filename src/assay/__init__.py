"""assay: decide whether a result is correct, say exactly what was checked, refuse to be talked into a pass.

``import assay`` stays light: no typer, FastAPI, SQLAlchemy, sympy or pint is imported until a
command or a unit check needs it.
"""

from assay._config import Config
from assay._errors import AssayError, InvalidInput, InvalidSpec, SandboxUnavailable
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

__version__ = "0.1.0"

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
