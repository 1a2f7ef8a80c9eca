"""Exact canonical forms for the answers most math problems have: Laurent polynomials in the
variables and in pi, with coefficients that are rational combinations of square roots (and i).

Square roots of distinct square-free integers are linearly independent over the rationals, pi is
transcendental over them, and variables are indeterminates, so this form is *canonical*: two
values are equal exactly when their forms are identical. ``2\\sqrt{2}`` and ``\\sqrt{8}``,
``\\frac{1}{\\sqrt3}`` and ``\\frac{\\sqrt3}{3}``, ``\\frac{2}{\\sqrt5-1}`` and
``\\frac{1+\\sqrt5}{2}``, ``\\frac{3\\pi}{4}`` and ``0.75\\pi``, ``(x+1)^2`` and ``x^2+2x+1``,
``(1+i)^2`` and ``2i`` are decided here, exactly, in microseconds, both ways (equal or not),
without sympy. What the form cannot hold (``e``, logarithms, trigonometric functions, cube roots
of non-cubes, division by a sum that is not ``a + b\\sqrt{n}``) returns None and goes on to the
numeric and symbolic steps.
"""

from __future__ import annotations

from fractions import Fraction

from assay.checks._math import _exact
from assay.checks._math._grammar import Node, TooLarge

Monomial = tuple[int, int, tuple[tuple[str, int], ...]]
"""(square-free radicand, power of pi, ((variable, power), ...) sorted); radicand -1 is i."""
Form = dict[Monomial, Fraction]

MAX_TERMS = 256
"""Most terms a form may have."""
MAX_EXPANSION = 32
"""Largest power of a sum that is expanded."""
_ONE: Monomial = (1, 0, ())


class _NotHere(Exception):
    """The value has no form here (not an error: the next step decides)."""


def form(node: Node) -> Form | None:
    """The canonical form of ``node``, or None when it has none. Raises TooLarge and Undefined."""
    try:
        return _form(node)
    except _NotHere:
        return None


def _constant(value: Fraction) -> Form:
    return {_ONE: value} if value else {}


def _squarefree(value: int) -> tuple[int, int]:
    """(s, m) with value = s**2 * m and m square-free, for value >= 1 (trial division, capped)."""
    if value.bit_length() > 64:
        raise _NotHere
    square, rest, factor = 1, value, 2
    while factor * factor <= rest:
        while rest % (factor * factor) == 0:
            rest //= factor * factor
            square *= factor
        factor += 1 if factor == 2 else 2
        if factor > 100_000:
            raise _NotHere
    return square, rest


def _sqrt_rational(value: Fraction) -> Form:
    """The principal square root of a rational (``\\sqrt{-4}`` is ``2i``)."""
    if value == 0:
        return {}
    numerator, denominator = abs(value.numerator) * value.denominator, value.denominator
    square, radicand = _squarefree(numerator)
    coefficient = Fraction(square, denominator)
    if value < 0:
        radicand = -radicand
    return {(radicand, 0, ()): coefficient}


def _times_radicands(a: int, b: int) -> tuple[Fraction, int]:
    """sqrt(a) * sqrt(b) = c * sqrt(m) for square-free a, b (negative means i times)."""
    sign = -1 if a < 0 and b < 0 else 1
    product = abs(a * b)
    square, radicand = _squarefree(product)
    if (a < 0) != (b < 0):
        radicand = -radicand
    return Fraction(sign * square), radicand


def _multiply(left: Form, right: Form) -> Form:
    result: Form = {}
    for (ra, pa, va), ca in left.items():
        for (rb, pb, vb), cb in right.items():
            factor, radicand = _times_radicands(ra, rb)
            powers = dict(va)
            for name, power in vb:
                powers[name] = powers.get(name, 0) + power
            key = (radicand, pa + pb, tuple(sorted((n, p) for n, p in powers.items() if p)))
            value = result.get(key, Fraction(0)) + _exact._check(ca * cb * factor)
            if value:
                result[key] = value
            else:
                result.pop(key, None)
            if len(result) > MAX_TERMS:
                raise TooLarge(f"the expanded answer has more than {MAX_TERMS} terms")
    return result


def _add(left: Form, right: Form) -> Form:
    result = dict(left)
    for key, value in right.items():
        total = result.get(key, Fraction(0)) + value
        if total:
            result[key] = _exact._check(total)
        else:
            result.pop(key, None)
    if len(result) > MAX_TERMS:
        raise TooLarge(f"the answer has more than {MAX_TERMS} terms")
    return result


def _inverse(value: Form) -> Form:
    """1/value for a monomial, or for ``a + b\\sqrt{n}`` (times its conjugate)."""
    if not value:
        raise _exact.Undefined("division by zero")
    if len(value) == 1:
        ((radicand, pi, variables), coefficient) = next(iter(value.items()))
        # 1/(c sqrt(r) pi^k v) = sqrt(r) / (c r) pi^-k v^-1
        key = (radicand, -pi, tuple((n, -p) for n, p in variables))
        return {key: _exact._check(1 / (coefficient * radicand))}
    keys = set(value)
    surds = [k for k in keys if k != _ONE]
    if len(keys) == 2 and _ONE in keys and len(surds) == 1 and surds[0][1:] == (0, ()):
        a, b, radicand = value[_ONE], value[surds[0]], surds[0][0]
        norm = a * a - b * b * radicand
        if norm == 0:
            raise _exact.Undefined("division by zero")
        return _add(_constant(a / norm), {surds[0]: -b / norm})
    raise _NotHere


def _power(base: Form, exponent: Fraction) -> Form:
    if exponent.denominator == 2 and len(base) == 1 and _ONE in base:
        root = _sqrt_rational(base[_ONE])
        return _power(root, Fraction(exponent.numerator))
    if exponent.denominator != 1:
        raise _NotHere
    power = exponent.numerator
    if not base and power <= 0:
        raise _exact.Undefined("0 raised to a power that is not positive")
    if power < 0:
        base, power = _inverse(base), -power
    if len(base) == 1:
        ((radicand, pi, variables), coefficient) = next(iter(base.items()))
        if radicand == 1:
            if (
                abs(power)
                * max(coefficient.numerator.bit_length(), coefficient.denominator.bit_length())
                > _exact.MAX_BITS
            ):
                raise TooLarge("a power in the answer is too large to decide")
            if abs(pi * power) > 1 << 20 or any(abs(p * power) > 1 << 20 for _, p in variables):
                raise TooLarge("a power in the answer is too large to decide")
            key = (1, pi * power, tuple((n, p * power) for n, p in variables if p * power))
            return {key: _exact._check(coefficient**power)} if coefficient else {}
    if power > MAX_EXPANSION:
        raise _NotHere  # expanding (a + b)^n for large n is the symbolic step's job
    result = _constant(Fraction(1))
    for _ in range(power):
        result = _multiply(result, base)
    return result


def _form(node: Node) -> Form:
    tag = node[0]
    if tag == "n":
        return _constant(node[1])
    if tag == "s":
        return {(1, 0, ((node[1], 1),)): Fraction(1)}
    if tag == "c":
        if node[1] == "pi":
            return {(1, 1, ()): Fraction(1)}
        if node[1] == "i":
            return {(-1, 0, ()): Fraction(1)}
        raise _NotHere
    if tag == "+":
        total: Form = {}
        for child in node[1]:
            total = _add(total, _form(child))
        return total
    if tag == "*":
        product = _constant(Fraction(1))
        for child in node[1]:
            product = _multiply(product, _form(child))
        return product
    if tag == "neg":
        return {key: -value for key, value in _form(node[1]).items()}
    if tag == "/":
        return _multiply(_form(node[1]), _inverse(_form(node[2])))
    if tag == "^":
        exponent = _exact.rational(node[2])
        if exponent is None:
            raise _NotHere
        return _power(_form(node[1]), exponent)
    if tag == "root":
        inner = _exact.rational(node[1])
        if inner is None:
            raise _NotHere
        if node[2] == 2:
            return _sqrt_rational(inner)
        value = _exact.rational(node)
        if value is None:
            raise _NotHere
        return _constant(value)
    if tag in ("!", "binom", "abs"):
        value = _exact.rational(node)
        if value is None:
            raise _NotHere
        return _constant(value)
    raise _NotHere


def proportional(a: Node, b: Node) -> bool | None:
    """Whether ``a`` is a nonzero rational multiple of ``b`` (``2y - 4x - 2`` and ``y - 2x - 1``);
    None when either has no form here."""
    mine, theirs = form(a), form(b)
    if mine is None or theirs is None:
        return None
    if not mine or not theirs or set(mine) != set(theirs):
        return False
    key = next(iter(theirs))
    ratio = mine[key] / theirs[key]
    return all(mine[k] == ratio * theirs[k] for k in theirs)
