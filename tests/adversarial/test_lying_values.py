"""Class: candidate values that lie about equality (issue 7, item 5).

A solution returned an ``int`` subclass whose ``__eq__`` always returns True, and every
``assert f(x) == y`` held. Only plain data with its exact built-in type crosses from the
candidate's process to the check's; a subclass of a plain type is refused, naming its type, and
a candidate object (an instance of its class) refuses every comparison, naming its type.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.adversarial.code_checks import run

LIARS = """
    class LyingInt(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__

    class NeverDifferent(int):
        def __ne__(self, other):
            return False

    class AlwaysTrue(int):
        def __bool__(self):
            return True

    class SameHash(str):
        def __hash__(self):
            return hash("expected")
        def __eq__(self, other):
            return True

    class Smallest(float):
        def __lt__(self, other):
            return True
        def __le__(self, other):
            return True

    class LyingStr(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__

    class LyingList(list):
        def __eq__(self, other):
            return True

    class LyingDict(dict):
        def __eq__(self, other):
            return True

    class LyingTuple(tuple):
        def __eq__(self, other):
            return True
        __hash__ = tuple.__hash__

    class Thing:
        def __eq__(self, other):
            return True
        def __bool__(self):
            return True
        def value(self):
            return LyingInt(0)
"""

# function body in the workspace -> the check that a lie would pass -> the type to be named
CASES: dict[str, tuple[str, str, str]] = {
    "eq": ("return LyingInt(0)", "assert f() == 42", "LyingInt"),
    "ne": ("return NeverDifferent(0)", "assert not (f() != 42)", "NeverDifferent"),
    "bool": ("return AlwaysTrue(0)", "assert f()", "AlwaysTrue"),
    "hash": ("return SameHash('x')", "assert f() in {'expected'}", "SameHash"),
    "lt": ("return Smallest(9.0)", "assert f() < 1.0", "Smallest"),
    "str": ("return LyingStr('no')", "assert f() == 'yes'", "LyingStr"),
    "list": ("return LyingList()", "assert f() == [1, 2, 3]", "LyingList"),
    "dict": ("return LyingDict()", "assert f() == {'a': 1}", "LyingDict"),
    "tuple": ("return LyingTuple()", "assert f() == (1, 2)", "LyingTuple"),
    "nested": ("return [1, LyingInt(0)]", "assert f() == [1, 42]", "LyingInt"),
    "dict_value": ("return {'a': LyingInt(0)}", "assert f() == {'a': 42}", "LyingInt"),
    "instance_eq": ("return Thing()", "assert f() == 42", "Thing"),
    "instance_bool": ("return Thing()", "assert f()", "Thing"),
    "method_result": ("return Thing()", "assert f().value() == 42", "LyingInt"),
}


def _files(body: str) -> dict[str, str]:
    from textwrap import dedent

    return {"solution.py": dedent(LIARS) + f"\ndef f():\n    {body}\n"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_lying_value_is_refuted_naming_its_type(tmp_path: Path, name: str) -> None:
    body, check, type_name = CASES[name]
    outcome = run(
        tmp_path, _files(body), {"kind": "python", "code": f"from solution import f\n{check}"}
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert type_name in outcome.detail


@pytest.mark.parametrize(
    "comparison", ["h == 1", "h != 1", "h < 1", "h >= 1", "bool(h)", "hash(h)"]
)
def test_a_candidate_class_handle_refuses_comparisons(tmp_path: Path, comparison: str) -> None:
    check = f"from solution import Thing\nh = Thing()\nresult = {comparison}\n"
    outcome = run(tmp_path, _files("return 0"), {"kind": "python", "code": check})
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "Thing" in outcome.detail


def test_a_check_cannot_swallow_the_refusal(tmp_path: Path) -> None:
    check = "from solution import f\ntry:\n    assert f() == 42\nexcept BaseException:\n    pass\n"
    outcome = run(tmp_path, _files("return LyingInt(0)"), {"kind": "python", "code": check})
    assert outcome.status is Status.REFUTED


def test_plain_values_still_cross_exactly(tmp_path: Path) -> None:
    solution = """
        class Stack:
            def __init__(self):
                self.items = []
            def push(self, x):
                self.items.append(x)
            def pop(self):
                return self.items.pop()
            def __len__(self):
                return len(self.items)

        class BadInput(ValueError):
            pass

        def values():
            return [None, True, 2**80, -1.5, 1j, "s\\u00e9", b"b", (1,), {1}, frozenset(), {"k": [1]}]

        def squares(n):
            for i in range(n):
                yield i * i

        def check(x):
            if x < 0:
                raise BadInput("negative")
            return x
    """
    check = """
        from solution import Stack, values, squares, check
        expected = [None, True, 2**80, -1.5, 1j, "s\\u00e9", b"b", (1,), {1}, frozenset(), {"k": [1]}]
        got = values()
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]
        s = Stack()
        s.push(3)
        s.push(4)
        assert len(s) == 2 and s.pop() == 4 and s.items == [3]
        assert list(squares(4)) == [0, 1, 4, 9]
        try:
            check(-1)
        except ValueError as exc:
            assert type(exc) is ValueError and str(exc) == "negative"
        else:
            raise AssertionError("no exception")
        print("all plain")
    """
    outcome = run(tmp_path, {"solution.py": solution}, {"kind": "python", "code": check})
    assert outcome.status is Status.VERIFIED, outcome.detail
