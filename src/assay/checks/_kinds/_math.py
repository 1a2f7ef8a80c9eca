"""``answer_math``: a math answer equal to the reference, decided without executing the answer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome, shorten
from assay.checks._math import _grammar, _latex
from assay.checks._math._compare import Options, compare
from assay.checks._numbers import find_numbers, normalize
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome


class MathSpec(Spec):
    """A reference math answer and the permissions an equivalent answer may use."""

    value: NonBlank
    """The reference answer, in LaTeX or plain notation (``\\frac{1}{2}``, ``2\\sqrt{2}``,
    ``(1, 2)``, ``[0, \\infty)``). It must be readable by the same grammar as answers: a
    reference that is not is refused when the check is built."""
    extract: Literal["last_boxed", "whole", "last_number"] | None = None
    """Which part of the answer to compare. Omitted: the last ``\\boxed{...}`` when there is
    one, else the whole answer. ``last_boxed``: the last ``\\boxed{...}``, and an answer without
    one is refuted. ``whole``: the whole answer. ``last_number``: the last number written in
    digits (read as ``answer_number`` reads numbers)."""
    relative_tolerance: float | None = Field(None, ge=0, allow_inf_nan=False)
    """Accept a real value within this fraction of the reference (``|a - r| <= t |r|``).
    Omitted: equality is exact. Applies to values without variables."""
    allow_units: bool = False
    """When true, a unit written on one side only (``%``, ``^\\circ``, ``\\text{cm}``) is
    ignored (percent too: ``0.5\\%`` then equals ``0.5``). When false, a unit on one side only
    refutes. Units written on both sides must be the same text: units are never converted (use
    ``answer_number`` with ``unit`` for that). Words that change the value (``thousand``,
    ``dozen``, ``squared``) are never units."""
    allow_assignment: bool = False
    """When true, an answer ``x = 3`` (a variable on the left) counts as ``3`` against a
    reference that is not an equation, and a reference ``x = 3`` accepts ``3``. When false, an
    equation only matches an equation."""
    time_limit: float = Field(1.0, gt=0, le=60, allow_inf_nan=False)
    """Seconds the symbolic step may take, in total for one answer, before the check is
    ``inconclusive`` (the worker is then killed and replaced)."""

    @field_validator("value")
    @classmethod
    def _readable(cls, value: str) -> str:
        try:
            _grammar.parse(value)
        except _grammar.Unreadable as exc:
            raise ValueError(f"the reference is not readable: {exc}") from exc
        except _grammar.TooLarge:
            pass  # a large reference is fine to state; comparing with it may be inconclusive
        return value


def _extract(spec: MathSpec, answer: str) -> str | Outcome:
    mode = spec.extract
    if mode == "whole":
        return _latex.strip_delimiters(answer)
    if mode == "last_number":
        numbers = find_numbers(normalize(answer))
        if not numbers:
            return Outcome.refuted("no number found in the answer: write the value in digits")
        last = numbers[-1]
        if last.problem is not None or not last.finite:
            return Outcome.refuted(
                f"the last number {last.text!r} cannot be read exactly: "
                f"{last.problem or 'it is not finite'}"
            )
        return last.text
    try:
        boxed = _latex.last_boxed(answer)
    except _latex.ExtractProblem as exc:
        return Outcome.refuted(str(exc))
    if boxed is None:
        if mode == "last_boxed":
            return Outcome.refuted(
                "no \\boxed{...} answer found: put the final answer in \\boxed{}"
            )
        return _latex.strip_delimiters(answer)
    return _latex.strip_delimiters(boxed)


@kind("answer_math", MathSpec)
def answer_math(spec: MathSpec, ctx: CheckContext) -> Outcome:
    """The answer is mathematically equal to ``value``; the answer is read, never executed.

    The answer is read by a small grammar (no ``eval``, no ``sympify``, no ``parse_expr``):
    numbers, ``+ - * / ^``, ``\\frac``/``\\dfrac``, ``\\sqrt``/``\\sqrt[n]``, ``!``,
    ``\\binom``, ``|x|``, ``\\pi``, ``e``, ``i``, one-letter variables (``x_1``), ``\\sin``,
    ``\\cos``, ``\\tan`` and their inverses, ``\\ln``, ``\\log`` (natural; ``\\log_b`` to base
    b), ``\\exp``, implicit products (``2\\pi``, ``4\\sqrt{2}``) and LaTeX spacing and sizing.
    Anything else is refuted as unreadable, with the reason: words, ``\\text{...}`` inside a
    value, ``\\phantom``, ``\\not``, ``\\neq``, ``\\pm``, ``\\approx``, ``...``/``\\dots``
    (``0.999...`` is not read as 1), ``!!``, code (``__import__``, ``lambda``), and writing
    that reads two ways: ``2 3``, ``-2 3``, a mixed number ``2\\frac{1}{2}``, ``-2\\frac{1}{2}``
    or ``2{\\frac{1}{2}}``, a number right after a fraction, root, factorial or numeric power
    (``\\frac{1}{2}3``, ``\\sqrt{2}3``, ``x^2 3``), a one-digit argument followed by a digit
    (``\\frac123``, ``\\sqrt42``, ``√23``), a product after ``/`` (``1/2x``, ``6/2(1+2)``:
    use ``\\frac`` or parentheses), and ``{,}`` not followed by exactly three digits
    (``3{,}14`` is a decimal comma; ``1{,}000`` groups thousands).

    Rules. Equivalence is decided in order: identical trees; exact rational arithmetic when
    both sides are rational (``\\frac{1}{2}``, ``0.5``, ``2^{-1}``; ``1/2^{99}`` is not
    ``1/2^{98}``, ``1/2004!`` is not ``1/2006!``); a 60-digit numeric comparison, which can
    only refute (variables are compared at nine points: three fixed, six drawn from a hash of
    the two answers, real and complex, each variable with its own sign, so an answer cannot be
    built to agree only at known points, and identities true only for positive or small values,
    ``\\ln(x/y) = \\ln x - \\ln y`` or ``\\arctan(\\tan x) = x``, are refuted); a symbolic proof
    that the difference is zero, in a separate, warm, killable sympy process (at most
    ``time_limit`` seconds for the whole answer, however many elements it has). Values that
    agree numerically but cannot be proved equal are ``inconclusive``, never a pass. Caps:
    answers over 1000 characters, nesting over 40 levels, exponent towers over 3, number
    literals over 400 digits, factorials over 5000!, magnitudes over 2^(2^20). A reference
    over a cap gives ``inconclusive`` ("too large to decide"); an answer over a cap when the
    reference is not is refuted ("write the value in a simpler form"), so padding a wrong
    answer (``4 + 0 \\cdot 9^{9^{9^9}}``) cannot mask it. The exact steps' own limits (numbers
    over about 39,000 digits, 256 expanded terms) pass the pair on to the numeric step. A value
    that does not exist is refuted: ``1/0``, ``0^0``, ``\\ln 0``, an answer with no value at any
    test point. ``\\sqrt[n]{}`` of a negative is the real root for odd n; a power of a negative
    base is its principal value.

    Structure: a tuple ``(a, b)`` (also an open interval) matches only a tuple, entry by
    entry, in order; a set ``\\{a, b\\}`` and a bare list ``a, b`` match each other as sets
    (order and repeats ignored); an interval ``[a, b)`` matches an interval with the same open
    and closed ends; ``\\cup`` of pieces matches as a set of pieces (no merging); an equation
    matches an equation whose sides are equal either way round or whose difference of sides
    is a nonzero constant multiple; ``x = 3`` against ``3`` only with ``allow_assignment``;
    ``<``, ``\\le`` match the same or mirrored inequality. ``\\infty`` only as a whole value or
    an interval end. Percent is a unit: ``50\\%`` equals ``50\\%``; against ``50`` or ``0.5``
    it is refuted unless ``allow_units`` (then ``50\\%`` equals ``50``, never ``0.5``);
    degrees (``^\\circ``) likewise. Words that change a value (``thousand``, ``dozen``,
    ``squared``, ``halves``, ``negative``, ``ppm``) are never units, so ``allow_units`` cannot
    drop them. Extraction: several boxes with different contents are a
    hedge and refuted; text after the box is ignored. No tolerance unless the spec gives one.
    Digits of other scripts read as digits (``４`` is 4).
    """
    answer = answer_or_outcome(ctx)
    if isinstance(answer, Outcome):
        return answer
    text = _extract(spec, answer)
    if isinstance(text, Outcome):
        return text
    try:
        expected = _grammar.parse(spec.value)
    except _grammar.TooLarge as exc:
        return Outcome.inconclusive(f"too large to decide: {exc}", {"reason": "too-large"})
    try:
        got = _grammar.parse(text)
    except _grammar.TooLarge as exc:
        # the reference is within the caps, so its value can be written within them: padding
        # a wrong answer past a cap must not turn its refutation into a masked inconclusive
        return Outcome.refuted(
            f"the answer is too large to read ({exc}) and the reference is not: write the "
            "value in a simpler form",
            {"reason": "too-large-answer"},
        )
    except _grammar.Unreadable as exc:
        return Outcome.refuted(
            f"the answer {shorten(text, 80)!r} cannot be read as math: {exc}",
            {"reason": "unreadable"},
        )
    options = Options(
        relative_tolerance=spec.relative_tolerance,
        allow_units=spec.allow_units,
        allow_assignment=spec.allow_assignment,
        time_limit=spec.time_limit,
    )
    result = compare(got, expected, options)
    evidence = {"step": result.step, "answer": shorten(text, 200)}
    if result.verdict == "equal":
        return Outcome.verified(
            f"{shorten(text, 80)!r} equals {shorten(spec.value, 80)!r} ({result.reason})",
            evidence,
        )
    if result.verdict == "different":
        return Outcome.refuted(
            f"{shorten(text, 80)!r} does not equal {shorten(spec.value, 80)!r}: {result.reason}",
            evidence,
        )
    return Outcome.inconclusive(result.reason, evidence)
