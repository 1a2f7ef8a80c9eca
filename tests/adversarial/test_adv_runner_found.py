"""Found by the adversarial review of the new judge (helper "adv-runner"): wrong work that is
still verified, or a refutation masked, after issue 7 items 3-7 and 10 and issue 15 item 2.

Every test states the status the attack must get and is marked ``xfail(strict=True)`` until the
class is closed: when a fix lands, the xfail turns into an unexpected pass and must be removed.
Each attack is a wrong solution; the checks are what an honest task author writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import Status
from tests.adversarial.code_checks import run


def found(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"found by adversarial review: {reason}")


def _status(tmp_path: Path, files: dict[str, str], spec: dict[str, Any]) -> Status:
    return run(tmp_path, files, spec).status


# 1. A workspace folder the check puts on sys.path is imported INSIDE the judge -------------------

FRAME_WALK = """
import os, sys
def f(x):
    frame = sys._getframe()
    while frame is not None:
        found = frame.f_locals
        if "completed" in found and "done_fd" in found:
            os.write(found["done_fd"], found["completed"])
            os._exit(0)
        frame = frame.f_back
    return 5
"""
LYING_INT = (
    "class L(int):\n    def __eq__(self, other):\n        return True\ndef f(x):\n    return L(5)\n"
)

SUBFOLDER_CHECKS = {
    "src_layout_relative": 'import sys\nsys.path.insert(0, "src")\nfrom solve import f\n',
    "src_layout_absolute": (
        'import os, sys\nsys.path.insert(0, os.path.join(os.getcwd(), "src"))\nfrom solve import f\n'
    ),
    "lib_appended": 'import sys\nsys.path.append("src")\nfrom solve import f\n',
    "chdir_and_empty_entry": 'import os, sys\nos.chdir("src")\nsys.path.insert(0, "")\nfrom solve import f\n',
}


@pytest.mark.parametrize("attack", ["frame_walk", "lying_int"])
@pytest.mark.parametrize("check", sorted(SUBFOLDER_CHECKS))
@pytest.mark.parametrize("kind", ["python", "hidden_python"])
def test_a_workspace_subfolder_on_sys_path_is_still_proxied(
    tmp_path: Path, attack: str, check: str, kind: str
) -> None:
    source = FRAME_WALK if attack == "frame_walk" else LYING_INT
    code = SUBFOLDER_CHECKS[check] + "assert f(2) == 4\n"
    assert _status(tmp_path, {"src/solve.py": source}, {"kind": kind, "code": code}) is (
        Status.REFUTED
    )


PICKLED = (
    "cbuiltins\nexec\n(V"
    + (FRAME_WALK + "f(0)\n").replace("\\", "\\u005c").replace("\n", "\\u000a")
    + "\ntR."
)


def test_unpickling_the_candidates_file_does_not_run_it_in_the_judge(tmp_path: Path) -> None:
    code = (
        "import pickle\nwith open('model.pkl', 'rb') as fh:\n    model = pickle.load(fh)\n"
        "assert model.predict([[1]]) == [2]\n"
    )
    spec = {"kind": "python", "code": code}
    assert _status(tmp_path, {"model.pkl": PICKLED}, spec) is Status.REFUTED


# 2. pytest-style tests the judge never runs ----------------------------------------------------

UNRUN_TESTS = {
    "pytest_test_class": "from solve import f\nclass TestF:\n    def test_two(self):\n        assert f(2) == 4\n",
    "async_test_function": "from solve import f\nasync def test_two():\n    assert f(2) == 4\n",
    "generator_test_function": "from solve import f\ndef test_two():\n    assert f(2) == 4\n    yield\n",
}


@pytest.mark.parametrize("name", sorted(UNRUN_TESTS))
def test_pytest_style_tests_that_never_run_are_not_a_pass(tmp_path: Path, name: str) -> None:
    files = {"solve.py": "def f(x):\n    return 5\n"}
    spec = {"kind": "python", "code": UNRUN_TESTS[name]}
    assert _status(tmp_path, files, spec) is Status.REFUTED


# 3. Attributes the judge's Remote class defines shadow the candidate's -------------------------

BARE = (
    "def f(x):\n    return x * x\n"
    "class Server:\n    def __init__(self):\n        self.host = ''\n"
    "def primes():\n    return object()\n"
    "main = object()\n"
)
SHADOWED = {
    "docstring": 'import solve\nassert solve.f.__doc__, "f needs a docstring"\n',
    "inspect_getdoc": "import inspect, solve\nassert inspect.getdoc(solve.f)\n",
    "annotations": 'import solve\nassert solve.f.__annotations__, "f needs type hints"\n',
    "attribute_named_host": 'import solve\nassert solve.Server().host, "host must be set"\n',
    "is_an_iterator": (
        "from collections.abc import Iterator\nimport solve\n"
        "assert isinstance(solve.primes(), Iterator)\n"
    ),
    "is_callable": "import solve\nassert callable(solve.main)\n",
    "has_getitem": (
        'import solve\nassert hasattr(solve.Server(), "__getitem__"), "Server must be indexable"\n'
    ),
}


@pytest.mark.parametrize("name", sorted(SHADOWED))
def test_a_handle_never_answers_for_the_candidate(tmp_path: Path, name: str) -> None:
    spec = {"kind": "python", "code": SHADOWED[name]}
    assert _status(tmp_path, {"solve.py": BARE}, spec) is Status.REFUTED


DOCTESTED = (
    'def f(x):\n    """Square x.\n\n    >>> f(2)\n    4\n    >>> f(3)\n    9\n    """\n'
    "    return x + 2\n"
)
DOCTEST_CHECKS = {
    "testmod_result": "import doctest, solve\nassert doctest.testmod(solve).failed == 0\n",
    "testmod_tuple": (
        "import doctest, solve\nfailures, tried = doctest.testmod(solve)\nassert failures == 0\n"
    ),
}


@pytest.mark.parametrize("name", sorted(DOCTEST_CHECKS))
def test_doctests_of_a_workspace_module_are_run(tmp_path: Path, name: str) -> None:
    spec = {"kind": "python", "code": DOCTEST_CHECKS[name]}
    assert _status(tmp_path, {"solve.py": DOCTESTED}, spec) is Status.REFUTED


# 4. The candidate's marked output glued to the check's unterminated line -------------------------

GLUED = {
    "check_ends_without_newline": (
        "import sys\ndef fib(n):\n    sys.stdout.write('55')\n    sys.stdout.flush()\n"
        "    return 54\n",
        "import sys\nfrom solve import fib\nsys.stdout.write(str(fib(10)))\n",
    ),
    "check_flushes_a_partial_line": (
        "def fib(n):\n    print('55')\n    return 54\n",
        "from solve import fib\nprint('fib(10) =', end=' ', flush=True)\nprint(fib(10))\n",
    ),
}


@pytest.mark.parametrize("match", [{"value": "55"}, {"pattern": r"\b55\b"}])
@pytest.mark.parametrize("name", sorted(GLUED))
def test_candidate_output_never_joins_a_line_of_the_check(
    tmp_path: Path, name: str, match: dict[str, str]
) -> None:
    source, check = GLUED[name]
    spec = {"kind": "python", "code": check, **match}
    assert _status(tmp_path, {"solve.py": source}, spec) is Status.REFUTED


# 5. `from solve import *` rebinds the check's own names to candidate objects ---------------------

NAME_THIEF = '__all__ = ["f", "__name__"]\ndef f(x):\n    return 5\n'

STAR = {
    "module_name": (
        "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 5.0\n",
        "import math\nfrom solve import *\nassert math.isclose(f(2), 4.0)\n",
    ),
    "function_name": (
        "def isclose(*a, **k):\n    return True\ndef f(x):\n    return 5.0\n",
        "from math import isclose\nfrom solve import *\nassert isclose(f(2), 4.0)\n",
    ),
    "builtin_name": (
        "def abs(x):\n    return 0\ndef f(x):\n    return 5.0\n",
        "from solve import *\nassert abs(f(2) - 4.0) < 1e-9\n",
    ),
    # `__all__ = ["f", "__name__"]` rebinds the check's __name__ to "solve": the main guard is
    # skipped, and _tests.py takes the check's own tests (whose __module__ is now "solve") for
    # imported ones and runs none of them.
    "dunder_name_main_guard": (
        NAME_THIEF,
        "from solve import *\ndef main():\n    assert f(2) == 4\n"
        'if __name__ == "__main__":\n    main()\n',
    ),
    "dunder_name_test_function": (
        NAME_THIEF,
        "from solve import *\ndef test_two():\n    assert f(2) == 4\n",
    ),
    "dunder_name_unittest_guard": (
        NAME_THIEF,
        "import unittest\nfrom solve import *\nclass T(unittest.TestCase):\n"
        "    def test_two(self):\n        self.assertEqual(f(2), 4)\n"
        'if __name__ == "__main__":\n    unittest.main()\n',
    ),
}


@pytest.mark.parametrize("name", sorted(STAR))
def test_a_star_import_cannot_replace_the_checks_names(tmp_path: Path, name: str) -> None:
    source, check = STAR[name]
    assert _status(tmp_path, {"solve.py": source}, {"kind": "python", "code": check}) is (
        Status.REFUTED
    )


# 6. A limit the candidate triggers on purpose masks an ordinary failed assert -------------------

SIDE_LIMITS = {
    "process_limit": (
        "import os, time\n"
        "def answer():\n"
        "    kids = []\n"
        "    try:\n"
        "        for _ in range(500):\n"
        "            pid = os.fork()\n"
        "            if pid == 0:\n"
        "                time.sleep(2)\n"
        "                os._exit(0)\n"
        "            kids.append(pid)\n"
        "    except OSError:\n"
        "        pass\n"
        "    for pid in kids:\n"
        "        os.kill(pid, 9)\n"
        "        os.waitpid(pid, 0)\n"
        "    return 41\n"
    ),
    "memory_limit_in_a_child": (
        "import os\n"
        "def answer():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        hog = []\n"
        "        while True:\n"
        "            hog.append(bytearray(16 << 20))\n"
        "    os.waitpid(pid, 0)\n"
        "    return 41\n"
    ),
}


@pytest.mark.parametrize("name", sorted(SIDE_LIMITS))
def test_a_side_limit_does_not_mask_a_wrong_answer(tmp_path: Path, name: str) -> None:
    spec = {
        "kind": "python",
        "code": "from solution import answer\nassert answer() == 42\n",
        "memory_mb": 256,
    }
    assert _status(tmp_path, {"solution.py": SIDE_LIMITS[name]}, spec) is Status.REFUTED


# 7. A workspace the judge cannot stage masks the check, limits_are_rules or not -----------------


@pytest.mark.parametrize("kind", ["python", "hidden_python", "shell"])
def test_an_unstageable_workspace_is_refuted_when_limits_are_rules(
    tmp_path: Path, kind: str
) -> None:
    code = (
        'test "$(python3 solve.py)" = 4'
        if kind == "shell"
        else "from solve import f\nassert f(2) == 4\n"
    )
    files = {"solve.py": "def f(x):\n    return 5\nprint(5)\n", "/".join(["d"] * 130) + "/x": ""}
    spec = {"kind": kind, "code": code, "limits_are_rules": True}
    assert _status(tmp_path, files, spec) is Status.REFUTED


# 8. Value semantics lost at the boundary: aliasing and in-place mutation ------------------------

ALIASING = {
    "shared_rows": (
        "def grid(n):\n    return [[0] * n] * n\n",
        "from solve import grid\ng = grid(3)\ng[0][0] = 1\n"
        'assert g[1][0] == 0, "rows must be independent"\n',
    ),
    "input_sorted_in_place": (
        "def sorted_copy(xs):\n    xs.sort()\n    return xs\n",
        "from solve import sorted_copy\ndata = [3, 1, 2]\n"
        "assert sorted_copy(data) == [1, 2, 3]\n"
        'assert data == [3, 1, 2], "the input must not be modified"\n',
    ),
    "returns_its_argument": (
        "def sorted_copy(xs):\n    xs.sort()\n    return xs\n",
        "from solve import sorted_copy\ndata = [3, 1, 2]\nassert sorted_copy(data) is not data\n",
    ),
    "input_dict_cleared": (
        "def total(d):\n    n = sum(d.values())\n    d.clear()\n    return n\n",
        'from solve import total\nd = {"a": 1, "b": 2}\nassert total(d) == 3\n'
        'assert d == {"a": 1, "b": 2}\n',
    ),
    "internal_list_leaks": (
        "class Inventory:\n    def __init__(self):\n        self._items = ['a']\n"
        "    def items(self):\n        return self._items\n",
        "from solve import Inventory\ninv = Inventory()\nview = inv.items()\n"
        'view.append("x")\nassert inv.items() == ["a"], "items() must return a copy"\n',
    ),
}


@pytest.mark.parametrize("name", sorted(ALIASING))
def test_aliasing_and_mutation_bugs_are_still_seen(tmp_path: Path, name: str) -> None:
    source, check = ALIASING[name]
    assert _status(tmp_path, {"solve.py": source}, {"kind": "python", "code": check}) is (
        Status.REFUTED
    )


# 9. A correct solution that prints a lot during one call deadlocks the judge -------------------


@pytest.mark.slow
@pytest.mark.parametrize("rules", [False, True], ids=["default", "limits_are_rules"])
def test_a_chatty_correct_solution_is_verified(tmp_path: Path, rules: bool) -> None:
    source = "def f(x):\n    for i in range(3000):\n        print('debug', i, 'x' * 40)\n"
    source += "    return x * x\n"
    spec = {
        "kind": "python",
        "code": "from solve import f\nassert f(2) == 4\n",
        "timeout": 5,
        "limits_are_rules": rules,
    }
    assert _status(tmp_path, {"solve.py": source}, spec) is Status.VERIFIED
