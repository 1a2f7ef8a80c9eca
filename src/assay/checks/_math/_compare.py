"""Whether an answer tree equals the reference tree: structure first, then each value by the
cheapest step that decides (identity, exact rationals, high-precision numbers, the symbolic
worker). Only identity, exact equality and a symbolic proof ever say ``equal``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.checks._math import _algebra, _exact, _numeric
from assay.checks._math._grammar import Node, TooLarge, describe, is_scalar

Verdict = Literal["equal", "different", "unknown"]


@dataclass(frozen=True)
class Result:
    """One comparison's verdict, its reason, and the step that decided it."""

    verdict: Verdict
    reason: str
    step: str = ""
    """Which step decided: identity, exact, numeric, symbolic, structure."""


@dataclass(frozen=True)
class Options:
    """What the spec allows (tolerance, units, assignments) and the symbolic step's time."""

    relative_tolerance: float | None = None
    allow_units: bool = False
    allow_assignment: bool = False
    time_limit: float = 1.0
    budget: _Budget = field(default_factory=lambda: _Budget())
    """The symbolic step's time for the whole answer (make one Options per answer):
    ``time_limit`` bounds one answer, not each of its set elements or equation sides (30
    elements that each needed sympy took 70 s with a 1 s limit)."""


class _Budget:
    """When the symbolic step's time for one answer runs out: set at its first question."""

    def __init__(self) -> None:
        self.deadline: float | None = None

    def remaining(self, limit: float) -> float:
        if self.deadline is None:
            self.deadline = time.monotonic() + limit
        return min(limit, self.deadline - time.monotonic())


EQUAL = Result("equal", "identical", "identity")


def compare(answer: Node, reference: Node, options: Options) -> Result:
    """Compare a whole answer with the reference (units and assignments first)."""
    answer_unit, answer = _unit(answer)
    reference_unit, reference = _unit(reference)
    if answer_unit != reference_unit:
        if answer_unit is not None and reference_unit is not None:
            return Result(
                "different",
                f"the answer is in {answer_unit!r}, the reference in {reference_unit!r}; units "
                "are not converted (use answer_number for that)",
                "structure",
            )
        if not options.allow_units:
            if answer_unit is not None:
                return Result(
                    "different",
                    f"the answer carries the unit {answer_unit!r} the reference does not; give "
                    "the bare value",
                    "structure",
                )
            return Result(
                "different",
                f"the answer has no unit; the reference is in {reference_unit!r}",
                "structure",
            )
    if options.allow_assignment:
        answer, reference = _assigned(answer, reference), _assigned(reference, answer)
    return _compare(answer, reference, options)


def _unit(node: Node) -> tuple[str | None, Node]:
    if node[0] == "unit":
        return str(node[2]).strip(), node[1]
    return None, node


def _assigned(node: Node, other: Node) -> Node:
    """``x = 3`` read as ``3`` when the other side is not an equation and ``x`` is a variable."""
    if node[0] == "eq" and other[0] != "eq" and node[1][0] == "s":
        return node[2]  # type: ignore[no-any-return]
    return node


def _compare(answer: Node, reference: Node, options: Options) -> Result:
    tag, expected = answer[0], reference[0]
    if answer == reference:
        return EQUAL
    if tag == "unit" or expected == "unit":
        return compare(answer, reference, options)
    if is_scalar(answer) and is_scalar(reference):
        return scalar(answer, reference, options)
    if tag == "inf" or expected == "inf":
        if tag == expected:
            return Result("different", "a different infinity", "structure")
        return Result(
            "different",
            f"the answer is {describe(answer)}, expected {describe(reference)}",
            "structure",
        )
    kinds = {tag, expected}
    if kinds <= {"list", "set"}:
        return _as_sets(answer[1], reference[1], options)
    if tag != expected:
        return Result(
            "different",
            f"the answer is {describe(answer)}, expected {describe(reference)}",
            "structure",
        )
    if tag == "tuple":
        if len(answer[1]) != len(reference[1]):
            return Result(
                "different",
                f"the answer has {len(answer[1])} entries, expected {len(reference[1])}",
                "structure",
            )
        return _all([(a, r) for a, r in zip(answer[1], reference[1], strict=True)], options)
    if tag == "interval":
        if answer[3:] != reference[3:]:
            return Result(
                "different", "the interval's ends are open/closed differently", "structure"
            )
        return _all([(answer[1], reference[1]), (answer[2], reference[2])], options)
    if tag == "union":
        return _as_sets(answer[1], reference[1], options)
    if tag == "eq":
        return _equation(answer, reference, options)
    if tag == "rel":
        flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
        if answer[1] == reference[1]:
            return _all([(answer[2], reference[2]), (answer[3], reference[3])], options)
        if flip[answer[1]] == reference[1]:
            return _all([(answer[2], reference[3]), (answer[3], reference[2])], options)
        return Result("different", "a different inequality", "structure")
    return Result("different", f"cannot compare {describe(answer)}", "structure")


def _all(pairs: list[tuple[Node, Node]], options: Options) -> Result:
    """Every pair equal; the first difference decides; else any unknown leaves it unknown."""
    unknown: Result | None = None
    for answer, reference in pairs:
        result = _compare(answer, reference, options)
        if result.verdict == "different":
            return result
        if result.verdict == "unknown" and unknown is None:
            unknown = result
    return unknown or Result("equal", "every entry is equal", "structure")


def _as_sets(answers: tuple[Node, ...], references: tuple[Node, ...], options: Options) -> Result:
    """Set equality: every answer element equals some reference element and the other way."""
    unknown: Result | None = None
    for mine, theirs, what in ((answers, references, "answer"), (references, answers, "reference")):
        for element in mine:
            found: Result | None = None
            for other in theirs:
                result = _compare(element, other, options)
                if result.verdict == "equal":
                    found = result
                    break
                if result.verdict == "unknown":
                    found = found or result
            if found is None:
                if what == "answer":
                    return Result(
                        "different", "the answer has an element the reference lacks", "structure"
                    )
                return Result(
                    "different", "the answer misses an element of the reference", "structure"
                )
            if found.verdict == "unknown" and unknown is None:
                unknown = found
    return unknown or Result("equal", "the same elements", "structure")


def _equation(answer: Node, reference: Node, options: Options) -> Result:
    """Equations are equal when their sides are (either way round), or when one side minus the
    other is a nonzero constant multiple of the reference's (``y = 2x`` and ``2x - y = 0``)."""
    straight = _all([(answer[1], reference[1]), (answer[2], reference[2])], options)
    if straight.verdict == "equal":
        return straight
    swapped = _all([(answer[1], reference[2]), (answer[2], reference[1])], options)
    if swapped.verdict == "equal":
        return swapped
    mine: Node = ("+", (answer[1], ("neg", answer[2])))
    theirs: Node = ("+", (reference[1], ("neg", reference[2])))
    try:
        _algebra.form(theirs)
    except _exact.Undefined as exc:
        return Result("unknown", f"the reference has no value: {exc}", "algebra")
    except TooLarge:
        pass  # a limit of the exact method: the numeric ratios below decide
    try:
        proportional = _algebra.proportional(mine, theirs)
    except TooLarge:
        proportional = None
    except _exact.Undefined as exc:
        return Result("different", f"a side of the answer has no value: {exc}", "algebra")
    if proportional is not None:
        if proportional:
            return Result("equal", "the equations are equivalent (a constant multiple)", "algebra")
        return Result("different", "the equations are not equivalent", "algebra")
    ratios = []
    undefined = 0
    too_large: TooLarge | None = None
    for point in _numeric.points(mine, theirs):
        try:
            bottom = _numeric.value(theirs, point)
        except TooLarge as exc:  # the reference's limit here: other points may still decide
            too_large = exc
            continue
        except _exact.Undefined:
            continue
        if bottom == 0:
            continue
        try:
            ratios.append(_numeric.value(mine, point) / bottom)
        except TooLarge as exc:
            return _answer_too_large(exc, "numeric")
        except _exact.Undefined:
            undefined += 1
            continue
    if not ratios and too_large is not None:
        return Result("unknown", f"too large to decide: {too_large}", "numeric")
    if not ratios and undefined:
        return Result(
            "different",
            "a side of the answer has no value at any test point where the reference's has one",
            "numeric",
        )
    if ratios and not all(_numeric.close(r, ratios[0]) for r in ratios):
        return Result("different", "the equations are not equivalent", "numeric")
    if ratios and _numeric.close(ratios[0], 0):
        return Result("different", "the equations are not equivalent", "numeric")
    return _ask("ratio", mine, theirs, options, "the equations are equivalent")


def scalar(answer: Node, reference: Node, options: Options) -> Result:
    """One value against another."""
    answer_form, reference_form = _exact.canonical(answer), _exact.canonical(reference)
    if answer_form == reference_form:
        return EQUAL
    # A cap hit by the exact steps (numbers past MAX_BITS, forms past MAX_TERMS) is a limit of
    # those methods, not of the value: the numeric step still refutes a different value, asks
    # the symbolic worker about an equal-looking one, and attributes its own caps to a side.
    try:
        expected = _exact.rational(reference_form)
    except TooLarge:
        return _numeric_step(answer_form, reference_form, options)
    except _exact.Undefined as exc:
        return Result("unknown", f"the reference has no value: {exc}", "exact")
    try:
        got = _exact.rational(answer_form)
    except TooLarge:
        return _numeric_step(answer_form, reference_form, options)
    except _exact.Undefined as exc:
        return Result("different", f"the answer has no value: {exc}", "exact")
    tolerance = options.relative_tolerance
    if got is not None and expected is not None:
        if got == expected:
            return Result("equal", "the same rational number", "exact")
        if tolerance and abs(got - expected) <= _exact_fraction(tolerance) * abs(expected):
            return Result("equal", f"within the relative tolerance {tolerance:g}", "exact")
        return Result("different", _differ(got, expected), "exact")
    if not tolerance:
        try:
            expected_form = _algebra.form(reference_form)
        except TooLarge:
            return _numeric_step(answer_form, reference_form, options)
        except _exact.Undefined as exc:
            return Result("unknown", f"the reference has no value: {exc}", "algebra")
        try:
            got_form = _algebra.form(answer_form)
        except TooLarge:
            return _numeric_step(answer_form, reference_form, options)
        except _exact.Undefined as exc:
            return Result("different", f"the answer has no value: {exc}", "algebra")
        if got_form is not None and expected_form is not None:
            if got_form == expected_form:
                return Result("equal", "the same exact value", "algebra")
            return _numeric_step(answer_form, reference_form, options, decided=True)
    return _numeric_step(answer_form, reference_form, options)


def _answer_too_large(exc: TooLarge, step: str) -> Result:
    """The answer hit a cap at a point where the reference has a value within the caps: refuted.
    A value the reference states within the caps can be written within them, and an
    inconclusive here would let any wrong answer mask itself (``4 + 0 \\cdot 9^{9^{9^9}}``)."""
    return Result(
        "different",
        f"the answer is too large to decide ({exc}) and the reference is not: write the value "
        "in a simpler form",
        step,
    )


def _exact_fraction(value: float) -> Any:
    from fractions import Fraction

    return Fraction(repr(value))


def _differ(got: Any, expected: Any) -> str:
    def show(value: Any) -> str:
        size = max(value.numerator.bit_length(), value.denominator.bit_length())
        if size > 200:
            return f"a rational with about {int(size * 0.30103)} digits"
        return str(value)

    return f"the answer is {show(got)}, expected {show(expected)}"


def _numeric_step(answer: Node, reference: Node, options: Options, decided: bool = False) -> Result:
    """Refute on a clear numeric difference; ``decided``: the exact forms already differ, so
    only the message is wanted."""
    samples = _numeric.points(answer, reference)
    compared = undefined = 0
    too_large: TooLarge | None = None
    for point in samples:
        try:
            expected = _numeric.value(reference, point)
        except TooLarge as exc:  # the reference's limit here: other points may still decide
            too_large = exc
            continue
        except _exact.Undefined:
            continue
        try:
            got = _numeric.value(answer, point)
        except TooLarge as exc:
            return _answer_too_large(exc, "numeric")
        except _exact.Undefined as exc:
            if len(samples) == 1:
                return Result("different", f"the answer has no value: {exc}", "numeric")
            undefined += 1
            continue
        compared += 1
        tolerance = options.relative_tolerance
        if tolerance and len(samples) == 1:
            if _numeric.within(got, expected, tolerance):
                return Result("equal", f"within the relative tolerance {tolerance:g}", "numeric")
            return Result(
                "different", f"the answer is {_short(got)}, expected {_short(expected)}", "numeric"
            )
        if not _numeric.close(got, expected):
            where = "" if len(samples) == 1 else " at a test point"
            return Result(
                "different",
                f"the answer is {_short(got)}{where}, expected {_short(expected)}",
                "numeric",
            )
    if decided:
        return Result("different", "the exact values differ", "algebra")
    if not compared and too_large is not None:
        return Result("unknown", f"too large to decide: {too_large}", "numeric")
    if not compared and undefined:
        return Result(
            "different",
            "the answer has no value at any test point where the reference has one",
            "numeric",
        )
    if not compared and len(samples) > 1:
        return Result("unknown", "the reference has no value at any test point", "numeric")
    return _ask("zero", answer, reference, options, "proved equal")


def _short(value: Any) -> str:
    return str(_numeric._context().nstr(value, 20))


def _ask(op: str, a: Node, b: Node, options: Options, proved: str) -> Result:
    from assay.checks._math import _worker

    remaining = options.budget.remaining(options.time_limit)
    if remaining <= 0:
        return Result(
            "unknown",
            f"could not decide in time: the symbolic step's {options.time_limit:g} s for this "
            "answer are spent",
            "symbolic",
        )
    try:
        said = _worker.ask(op, a, b, remaining)
    except _worker.WorkerTimeout:
        return Result(
            "unknown",
            "could not decide in time: symbolic comparison took longer than "
            f"{options.time_limit:g} s",
            "symbolic",
        )
    except _worker.WorkerFailed as exc:
        return Result("unknown", f"could not decide: {exc}", "symbolic")
    if said in ("zero", "constant"):
        return Result("equal", proved + " by symbolic simplification", "symbolic")
    if said == "nonzero":
        return Result("different", "the values differ (symbolic simplification)", "symbolic")
    if op == "ratio":
        return Result(
            "unknown",
            "the equations agree at every test point but symbolic simplification could not "
            "prove them equivalent",
            "symbolic",
        )
    return Result(
        "unknown",
        "the values agree to 60 digits but symbolic simplification could not prove them equal",
        "symbolic",
    )
