"""Answer text that is code: a grader that evaluates it (``eval``, sympy's ``parse_expr`` or
``sympify``, latex2sympy) runs the policy's code (verl #7603, inspect_ai PR #4361). answer_math
reads answers with its own grammar; these payloads must be refuted, and nothing they ask for may
happen."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.checks._math import _grammar
from tests.helpers import R, run_kind

MATH = Path(__file__).resolve().parents[2] / "src" / "assay" / "checks" / "_math"


def _payloads(marker: Path) -> list[str]:
    touch = f"__import__('pathlib').Path('{marker}').touch()"
    return [
        touch,
        f"\\boxed{{{touch}}}",
        f"\\boxed{{1 + {touch}}}",
        f"\\boxed{{(lambda: {touch})()}}",
        f'\\boxed{{eval("{touch}")}}',
        f'\\boxed{{exec("{touch}")}}',
        f"\\boxed{{\\text{{{touch}}}}}",
        "\\boxed{Symbol('x').__class__.__init__.__globals__}",
        f'\\boxed{{sympify("{touch}")}}',
        "\\boxed{().__class__.__bases__[0].__subclasses__()}",
        "\\boxed{x.__class__}",
        "\\boxed{1 .real}",
        "\\boxed{{'a': 1}['a']}",
        "\\boxed{Integer(1)}",
        "\\boxed{S(1)}",
        "\\boxed{globals()}",
        "\\boxed{open('/etc/passwd').read()}",
        "\\boxed{\\input{/etc/passwd}}",
        "\\boxed{\\def\\x{1}\\x}",
    ]


@pytest.mark.parametrize("index", range(19))
def test_code_in_the_answer_is_refuted_and_never_runs(index: int, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payload = _payloads(marker)[index]
    outcome = run_kind("answer_math", answer=payload, value="1")
    assert outcome.status is R, outcome.detail
    assert not marker.exists(), "the payload ran"


def test_the_grammar_yields_only_plain_data() -> None:
    """What reaches the worker is tuples of tags, names, integers and fractions, never text to
    parse: every string in a tree is a fixed tag, a one-letter variable or a function name."""
    tree = _grammar.parse("\\frac{\\sin^2 x + \\ln y_1}{2^{3}} + \\sqrt[3]{z}")
    allowed = {"+", "*", "/", "^", "f", "log", "root", "s", "n", "c", "neg", "sin", "ln"}

    def strings(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, tuple):
            return [s for item in node for s in strings(item)]
        return []

    for text in strings(tree):
        assert text in allowed or (len(text) <= 4 and text[0].isalpha()), text


def test_no_evaluator_is_used_on_answer_text() -> None:
    source = "\n".join(p.read_text() for p in MATH.glob("*.py"))
    for forbidden in (
        "eval(",
        "exec(",
        "parse_expr(",
        "sympify(",
        "import latex2sympy",
        "parse_latex(",
        "sympy.S(",
    ):
        assert forbidden not in source, forbidden
