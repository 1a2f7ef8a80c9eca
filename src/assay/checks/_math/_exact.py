"""Exact rational values of answer trees, with caps, and the canonical form of a tree.

Most math answers are rational (``\\frac{1}{2}``, ``0.5``, ``2^{-1}``, ``\\frac{1}{2004!}``), and
for them equality is decided here, exactly, without a CAS. Every step checks the size of what it
is about to compute first, so ``9^{9^{9^9}}`` raises :class:`TooLarge` at once instead of
stalling.
"""

from __future__ import annotations

import math
from fractions import Fraction

from assay.checks._math._grammar import Node, TooLarge

MAX_BITS = 1 << 17
"""Largest numerator or denominator kept, in bits (about 39,000 decimal digits)."""
MAX_FACTORIAL = 5000
"""Largest factorial argument (``5000!`` has 16,326 digits)."""


class Undefined(ValueError):
    """The value does not exist: division by zero, ``0^{-1}``, ``(-1)!``."""


def _check(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS:
        raise TooLarge("a number in the answer is too large to decide")
    return value


def _integer_root(value: int, index: int) -> int | None:
    """The exact non-negative ``index``-th root of ``value`` >= 0, or None when not whole."""
    if value < 2:
        return value
    guess = math.isqrt(value) if index == 2 else _newton_root(value, index)
    for candidate in (guess - 1, guess, guess + 1):
        if candidate >= 0 and candidate**index == value:
            return candidate
    return None


def _newton_root(value: int, index: int) -> int:
    x = 1 << ((value.bit_length() + index - 1) // index)
    while True:
        y = ((index - 1) * x + value // x ** (index - 1)) // index
        if y >= x:
            return x
        x = y


def _rational_root(value: Fraction, index: int) -> Fraction | None:
    """The real ``index``-th root of ``value`` if rational (odd roots of negatives are negative)."""
    if value < 0:
        if index % 2 == 0:
            return None
        root = _rational_root(-value, index)
        return None if root is None else -root
    numerator = _integer_root(value.numerator, index)
    denominator = _integer_root(value.denominator, index)
    if numerator is None or denominator is None:
        return None
    return Fraction(numerator, denominator)


def _power(base: Fraction, exponent: Fraction) -> Fraction | None:
    if exponent.denominator != 1:
        if base < 0 or exponent.denominator > 64:
            return None  # a complex principal value, or irrational: not decided here
        root = _rational_root(base, exponent.denominator)
        if root is None:
            return None
        base, exponent = root, Fraction(exponent.numerator)
    power = exponent.numerator
    if base == 0:
        if power <= 0:  # 0^0 too: an indeterminate form, never read as 1
            raise Undefined("0 raised to a power that is not positive")
        return Fraction(0)
    if base in (1, -1):
        return base if power % 2 else Fraction(1)
    size = max(base.numerator.bit_length(), base.denominator.bit_length())
    if abs(power) * size > MAX_BITS:
        raise TooLarge("a power in the answer is too large to decide")
    return _check(base**power)


def rational(node: Node) -> Fraction | None:
    """The exact value when ``node`` is rational; None when it is not (or not decided here).

    Raises TooLarge past the caps and Undefined for a value that does not exist."""
    tag = node[0]
    if tag == "n":
        value: Fraction = node[1]
        return value
    if tag in ("s", "c", "f", "log", "inf"):
        return None
    if tag == "+":
        total = Fraction(0)
        parts = [rational(child) for child in node[1]]
        if any(part is None for part in parts):
            return None
        for part in parts:
            assert part is not None
            total = _check(total + part)
        return total
    if tag == "*":
        product = Fraction(1)
        factors = [rational(child) for child in node[1]]
        if any(factor is None for factor in factors):
            return (
                None  # 0 times an irrational is left to the numeric step, which sees if it exists
            )
        for factor in factors:
            assert factor is not None
            product = _check(product * factor)
        return product
    if tag == "neg":
        inner = rational(node[1])
        return None if inner is None else -inner
    if tag == "/":
        top, bottom = rational(node[1]), rational(node[2])
        if bottom == 0:
            raise Undefined("division by zero")
        if top is None or bottom is None:
            return None
        return _check(top / bottom)
    if tag == "^":
        base, exponent = rational(node[1]), rational(node[2])
        if base is None or exponent is None:
            return None
        return _power(base, exponent)
    if tag == "root":
        inner = rational(node[1])
        return None if inner is None else _rational_root(inner, node[2])
    if tag == "abs":
        inner = rational(node[1])
        return None if inner is None else abs(inner)
    if tag == "!":
        return Fraction(math.factorial(whole(node[1], "a factorial")))
    if tag == "binom":
        n, k = whole(node[1], "a binomial"), whole(node[2], "a binomial")
        return Fraction(math.comb(n, k))
    return None


def whole(node: Node, what: str) -> int:
    """The non-negative integer argument of a factorial or binomial, within the caps."""
    value = rational(node)
    if value is None or value.denominator != 1:
        raise Undefined(f"{what} needs a whole-number argument")
    if value < 0:
        raise Undefined(f"{what} of a negative number is undefined")
    if value > MAX_FACTORIAL:
        raise TooLarge(f"{what} of {value} is too large to decide (the limit is {MAX_FACTORIAL})")
    return int(value)


def canonical(node: Node) -> Node:
    """A form in which trees that differ only in the order of sums and products, nesting of
    sums and products, or double negation, are identical (so identical answers match at once)."""
    tag = node[0]
    if tag in ("+", "*"):
        children: list[Node] = []
        for child in node[1]:
            child = canonical(child)
            children.extend(child[1] if child[0] == tag else [child])
        return (tag, tuple(sorted(children, key=repr)))
    if tag == "neg":
        inner = canonical(node[1])
        if inner[0] == "neg":
            return inner[1]  # type: ignore[no-any-return]
        if inner[0] == "n":
            return ("n", -inner[1])
        return ("neg", inner)
    if tag in ("/", "^", "binom"):
        return (tag, canonical(node[1]), canonical(node[2]))
    if tag in ("!", "abs"):
        return (tag, canonical(node[1]))
    if tag == "root":
        return ("root", canonical(node[1]), node[2])
    if tag == "f":
        return ("f", node[1], canonical(node[2]))
    if tag == "log":
        return ("log", None if node[1] is None else canonical(node[1]), canonical(node[2]))
    return node
