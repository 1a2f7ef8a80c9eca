"""The check engine: kinds (one registry), building checks from specs, running them.

A kind is a pure function of its spec and the context; the engine stamps the kind on each
outcome and turns any exception inside a kind into an ``error`` outcome.
"""

from assay.checks import _kinds  # noqa: F401  (registers the built-in kinds)
from assay.checks._answer_key import AnswerKeyScore, score_answers, verify
from assay.checks._context import CheckContext, Receipt
from assay.checks._engine import Check, build_check, build_checks, run_checks, spec_error
from assay.checks._kinds._json_schema import validate_json
from assay.checks._registry import Kind, all_kinds, get_kind, kind
from assay.checks._spec import Spec
from assay.checks._task import Task, check_task, load_task, parse_task

__all__ = [
    "AnswerKeyScore",
    "Check",
    "CheckContext",
    "Kind",
    "Receipt",
    "Spec",
    "Task",
    "all_kinds",
    "build_check",
    "build_checks",
    "check_task",
    "get_kind",
    "kind",
    "load_task",
    "parse_task",
    "run_checks",
    "score_answers",
    "spec_error",
    "validate_json",
    "verify",
]
