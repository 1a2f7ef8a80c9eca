"""Class: unittest / pytest-style checks that test nothing (issue 7, item 10).

``unittest.main()`` once looked in the runner's ``__main__``: no test ran, ``exit=False``
verified a wrong solution and the default refuted a right one. The check is now the real
``__main__``; a failing test refutes, no test run refutes, and both calls behave as a unittest
user expects. Top-level ``def test_*():`` functions are called after the check's last line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

RIGHT = {"solution.py": "def add(a, b):\n    return a + b\n"}
WRONG = {"solution.py": "def add(a, b):\n    return a - b\n"}

UNITTEST = """
import unittest
from solution import add

class TestAdd(unittest.TestCase):
    def test_small(self):
        self.assertEqual(add(2, 3), 5)

    def test_negative(self):
        self.assertEqual(add(-2, -3), -5)

    def test_raises_nothing(self):
        add(0, 0)
"""

PYTEST = """
from solution import add

def test_small():
    assert add(2, 3) == 5

def test_zero():
    assert add(0, 7) == 7
"""

STYLES = {
    "main": UNITTEST + "\nif __name__ == '__main__':\n    unittest.main()\n",
    "main_exit_false": UNITTEST + "\nunittest.main(exit=False)\nprint('after main')\n",
    "main_verbose_argv": UNITTEST + "\nunittest.main(argv=['check', '-v'])\n",
    "classes_never_run": UNITTEST,
    "pytest_functions": PYTEST,
    "both_styles": UNITTEST + PYTEST + "\nunittest.main(exit=False)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("kind", ["python", "hidden_python"])
def test_a_right_solution_passes_and_a_wrong_one_is_refuted(
    tmp_path: Path, style: str, kind: str
) -> None:
    spec = {"kind": kind, "code": STYLES[style]}
    right = run(tmp_path / "right", RIGHT, spec)
    assert right.status is Status.VERIFIED, right.detail
    wrong = run(tmp_path / "wrong", WRONG, spec)
    assert wrong.status is Status.REFUTED, wrong.detail


VACUOUS = {
    "no_test_cases": ("import unittest\nunittest.main()\n", "ran no tests"),
    "no_test_cases_exit_false": ("import unittest\nunittest.main(exit=False)\n", "ran no tests"),
    "all_skipped": (
        "import unittest\n"
        "class T(unittest.TestCase):\n"
        "    @unittest.skip('later')\n"
        "    def test_a(self):\n"
        "        raise AssertionError\n"
        "unittest.main()\n",
        "all of them skipped",
    ),
    "empty_test_case": (
        "import unittest\nclass T(unittest.TestCase):\n    pass\nunittest.main()\n",
        "ran no tests",
    ),
    "fixture_argument": ("def test_a(tmp_path):\n    assert True\n", "fixtures are not supported"),
    "failing_test_exit_false": (
        "import unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_a(self):\n"
        "        self.fail('no')\n"
        "unittest.main(exit=False)\n",
        "1 test(s) failed",
    ),
    "catching_the_failure": (
        "def test_a():\n    assert False\ntry:\n    pass\nexcept BaseException:\n    pass\n",
        "1 test(s) failed",
    ),
}


@pytest.mark.parametrize("name", sorted(VACUOUS))
def test_no_test_run_or_a_failing_one_refutes(tmp_path: Path, name: str) -> None:
    code, message = VACUOUS[name]
    outcome = run(tmp_path, RIGHT, {"kind": "python", "code": code})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert message in outcome.detail


def test_the_example_is_verified() -> None:
    from assay import check_task

    example = Path(__file__).resolve().parents[2] / "examples" / "python_unittest.json"
    report = check_task(example)
    assert report.status is Status.VERIFIED, [o.detail for o in report.outcomes]
