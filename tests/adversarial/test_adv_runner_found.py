"""Found by the adversarial review of the new judge (helper "adv-runner"): wrong work that was
still verified, or a refutation masked, after issue 7 items 3-7 and 10 and issue 15 item 2.

Each attack is a wrong solution; the checks are what an honest task author writes. Fixed by
helper "runner-fix" (classes A, A2, B, C, D, E, F in part, G, H, I): those tests now pass.
What is not fixed stays ``xfail(strict=True)`` with its reason (doctests of a workspace
module; a returned container that aliases state kept in the candidate's process). Section 10
pins that honest work of the same shapes is still verified.
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


@found(
    "not fixed (documented): doctest.testmod(solve) introspects the RemoteModule, whose "
    "__dict__ holds no candidate names: 0 examples attempted. Doctests the candidate writes are "
    "not evidence anyway; write the examples into the check"
)
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

# Shared rows, in-place changes to arguments and a returned argument now cross (back-references,
# changed arguments sent back and applied, "argument i"); a container that stays in the
# candidate's process (its object's state) still arrives as a copy.
LEAKED_STATE = (
    "not fixed (documented): a returned container is a copy; aliasing with state that stays "
    "in the candidate's process (an object's internal list) cannot be observed: return a handle"
)
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


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=found(LEAKED_STATE)) if n == "internal_list_leaks" else n
        for n in sorted(ALIASING)
    ],
)
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


# 10. After the fixes: honest work in the same shapes is still verified --------------------------

PLAIN_PICKLE = "(dp0\nVa\np1\n(lp2\nI1\naI2\nas."  # pickle.dumps({"a": [1, 2]}, protocol=0)

HONEST = {
    "src_layout_module": (
        {"src/solve.py": "def f(x):\n    return x * x\n"},
        "import sys\nsys.path.insert(0, 'src')\nfrom solve import f\nassert f(2) == 4\n",
    ),
    "src_layout_package": (
        {"src/pkg/__init__.py": "", "src/pkg/mod.py": "def f(x):\n    return x * x\n"},
        "import sys\nsys.path.insert(0, 'src')\nfrom pkg.mod import f\nassert f(2) == 4\n",
    ),
    "plain_data_pickle": (
        {"data.pkl": PLAIN_PICKLE},
        "import pickle\nwith open('data.pkl', 'rb') as fh:\n    assert pickle.load(fh) == {'a': [1, 2]}\n",
    ),
    "star_import_of_own_names": (
        {
            "solve.py": "import math\nfrom math import sqrt\nLIMIT = 3\ndef f(x):\n    return x * x\n"
        },
        "from solve import *\nassert f(2) == 4 and LIMIT == 3\n"
        "assert 'math' not in dir() and 'sqrt' not in dir()\n",
    ),
    "pytest_class_with_setup": (
        {"solve.py": "def f(x):\n    return x * x\n"},
        "from solve import f\nclass TestF:\n    def setup_method(self, method):\n"
        "        self.x = 2\n    def test_two(self):\n        assert f(self.x) == 4\n",
    ),
    "in_place_api": (
        {"solve.py": "def sort_in_place(xs):\n    xs.sort()\n"},
        "from solve import sort_in_place\nd = [3, 1, 2]\nsort_in_place(d)\nassert d == [1, 2, 3]\n",
    ),
    "nested_in_place_keeps_rows": (
        {"solve.py": "def bump(g, by=1):\n    g[0][0] += by\n"},
        "from solve import bump\ng = [[0, 0], [0, 0]]\nrow = g[0]\nbump(g, by=2)\n"
        "assert row == [2, 0] and g[1] == [0, 0] and g[0] is row\n",
    ),
    "returns_its_argument": (
        {"solve.py": "def add(xs, d):\n    xs.append(1)\n    d['k'] = 2\n    return xs\n"},
        "from solve import add\nd, m = [], {}\nassert add(d, d=m) is d\nassert d == [1] and m == {'k': 2}\n",
    ),
    "independent_rows": (
        {"solve.py": "def grid(n):\n    return [[0] * n for _ in range(n)]\n"},
        "from solve import grid\ng = grid(3)\ng[0][0] = 1\nassert g[1][0] == 0\n",
    ),
    "reads_workspace_data": (
        {"answer.txt": "42\n"},
        "with open('answer.txt') as fh:\n    assert fh.read().strip() == '42'\n",
    ),
    "introspection": (
        {"solve.py": 'def f(x):\n    "Square."\n    return x * x\n'},
        "import solve\nassert callable(solve.f) and solve.f.__doc__ == 'Square.'\n"
        "assert solve.f.__name__ == 'f' and not callable(solve.f(2))\n",
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_work_in_the_same_shapes_is_verified(tmp_path: Path, name: str) -> None:
    files, check = HONEST[name]
    outcome = run(tmp_path, files, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail


@pytest.mark.parametrize(("value", "status"), [("4", Status.VERIFIED), ("debug", Status.REFUTED)])
def test_only_the_checks_own_output_is_matched(tmp_path: Path, value: str, status: Status) -> None:
    source = "def f(x):\n    print('debug', x)\n    return x * x\n"
    spec = {"kind": "python", "code": "from solve import f\nprint(f(2))\n", "value": value}
    assert _status(tmp_path, {"solve.py": source}, spec) is status


LOADERS = {
    "runpy_run_path": "import runpy\nf = runpy.run_path('solve.py')['f']\nassert f(2) == 4\n",
    "spec_from_file_location": (
        "import importlib.util\nspec = importlib.util.spec_from_file_location('s', 'solve.py')\n"
        "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
        "assert module.f(2) == 4\n"
    ),
    "site_addsitedir_pth": "import site\nsite.addsitedir('.')\nfrom solve import f\nassert f(2) == 4\n",
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_the_judge_never_loads_workspace_code_itself(tmp_path: Path, name: str) -> None:
    files = {"solve.py": FRAME_WALK, "evil.pth": "import os; os._exit(0)\n"}
    outcome = run(tmp_path, files, {"kind": "python", "code": LOADERS[name]})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "in the judge" in outcome.detail


def test_a_limit_that_kills_the_candidates_process_stays_a_limit(tmp_path: Path) -> None:
    source = (
        "def answer():\n    hog = []\n    while True:\n        hog.append(bytearray(16 << 20))\n"
    )
    spec = {
        "kind": "python",
        "code": "from solution import answer\nassert answer() == 42\n",
        "memory_mb": 256,
    }
    outcome = run(tmp_path, {"solution.py": source}, spec)
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
    assert "memory" in outcome.detail


def test_a_side_limit_does_not_mask_a_refusal(tmp_path: Path) -> None:
    """A refusal by the proxy (a lying int) is a finding too, whatever a child hit."""
    source = SIDE_LIMITS["process_limit"].replace("return 41", "return L(41)")
    source += "class L(int):\n    def __eq__(self, other):\n        return True\n"
    spec = {
        "kind": "python",
        "code": "from solution import answer\nassert answer() == 42\n",
        "memory_mb": 256,
    }
    outcome = run(tmp_path, {"solution.py": source}, spec)
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "subclass of int" in outcome.detail


@pytest.mark.parametrize(
    ("source", "status"),
    [("def f(x):\n    return x * x\n", Status.VERIFIED), (LYING_INT, Status.REFUTED)],
    ids=["correct", "lying_int"],
)
def test_a_zip_on_the_checks_sys_path_is_proxied(
    tmp_path: Path, source: str, status: Status
) -> None:
    import zipfile

    from assay import CheckContext, build_check
    from tests.adversarial.code_checks import sandbox, workspace

    ws = workspace(tmp_path, {})
    with zipfile.ZipFile(ws / "lib.zip", "w") as archive:
        archive.writestr("solve.py", source)
    code = "import sys\nsys.path.insert(0, 'lib.zip')\nfrom solve import f\nassert f(2) == 4\n"
    check = build_check({"kind": "python", "code": code, "timeout": 20})
    outcome = check.run(CheckContext(workspace=ws, sandbox=sandbox()))
    assert outcome.status is status, outcome.detail
