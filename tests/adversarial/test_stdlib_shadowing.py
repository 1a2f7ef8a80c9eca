"""Class: a workspace module shadows the standard library (issue 7, item 4).

A ``math.py`` whose ``isclose`` returns True or a ``json.py`` whose ``load`` returns the
expected dict once made ``import math`` / ``import json`` checks pass on wrong work. The check's
process never has the workspace on its path, and even a check that puts it there gets the
standard library: a standard module always wins over a workspace file of the same name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

# name: (the fake module, a check that uses the real one, the wrong work, the right work)
CASES: dict[str, tuple[str, str, dict[str, str], dict[str, str]]] = {
    "math": (
        "def isclose(*a, **k):\n    return True\ndef sqrt(x):\n    return 7.0\n",
        "import math\nassert math.isclose(float(open('answer.txt').read()), math.sqrt(2))",
        {"answer.txt": "1.5"},
        {"answer.txt": "1.4142135623730951"},
    ),
    "json": (
        "def load(f):\n    return {'answer': 42}\ndef loads(s):\n    return {'answer': 42}\n",
        "import json\nassert json.load(open('result.json')) == {'answer': 42}",
        {"result.json": '{"answer": 41}'},
        {"result.json": '{"answer": 42}'},
    ),
    "re": (
        "def fullmatch(*a, **k):\n    return True\ndef match(*a, **k):\n    return True\n",
        "import re\nassert re.fullmatch(r'[0-9]+', open('answer.txt').read().strip())",
        {"answer.txt": "forty-two"},
        {"answer.txt": "42"},
    ),
    "statistics": (
        "def mean(xs):\n    return 3\n",
        "import statistics\nassert statistics.mean(map(int, open('answer.txt').read().split())) == 3",
        {"answer.txt": "1 1 1"},
        {"answer.txt": "2 3 4"},
    ),
    "fractions": (
        "class Fraction:\n    def __init__(self, *a):\n        pass\n    def __eq__(self, o):\n        return True\n",
        "from fractions import Fraction\nassert Fraction(open('answer.txt').read().strip()) == Fraction(1, 3)",
        {"answer.txt": "1/2"},
        {"answer.txt": "1/3"},
    ),
    "unittest": (
        "class TestCase:\n    pass\ndef main(*a, **k):\n    pass\n",
        (
            "import unittest\n"
            "class T(unittest.TestCase):\n"
            "    def test_answer(self):\n"
            "        self.assertEqual(open('answer.txt').read().strip(), '42')\n"
            "unittest.main()\n"
        ),
        {"answer.txt": "41"},
        {"answer.txt": "42"},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("put_on_path", [False, True])
def test_the_check_uses_the_real_standard_library(
    tmp_path: Path, name: str, put_on_path: bool
) -> None:
    fake, check, wrong, right = CASES[name]
    if put_on_path:  # a check that adds the workspace to sys.path itself still gets the stdlib
        check = "import sys\nsys.path.insert(0, '/workspace')\nsys.path.insert(0, '')\n" + check
    outcome = run(
        tmp_path / "wrong", {f"{name}.py": fake, **wrong}, {"kind": "python", "code": check}
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    outcome = run(
        tmp_path / "right", {f"{name}.py": fake, **right}, {"kind": "python", "code": check}
    )
    assert outcome.status is Status.VERIFIED, outcome.detail


def test_a_workspace_package_named_like_a_stdlib_package_is_ignored(tmp_path: Path) -> None:
    files = {"json/__init__.py": "def load(f):\n    return {'answer': 42}\n", "result.json": "{}"}
    code = "import json\nassert json.load(open('result.json')) == {'answer': 42}"
    assert run(tmp_path, files, {"kind": "hidden_python", "code": code}).status is Status.REFUTED
