"""High-precision numeric values of answer trees (mpmath), to separate unequal answers fast.

A numeric difference far above the working precision proves two closed forms differ (60 digits
separate ``\\sqrt{2}`` from ``1.41421356237``); numeric agreement proves nothing, so it is only
ever a reason to ask the symbolic worker for a proof, or, when the spec gives a tolerance, the
measure that tolerance is about. Variables are given the same fixed values on both sides, at
three fixed points (positive, negative, complex) and six drawn from a hash of the two trees
(see ``_drawn``), so ``2x`` and ``2y`` or ``\\sqrt{x^2}`` and ``x`` come apart.
"""

from __future__ import annotations

import hashlib
import random
import threading
import zlib
from typing import Any

from assay.checks._math._exact import Undefined, whole
from assay.checks._math._grammar import Node, TooLarge

DIGITS = 60
"""Working precision, in decimal digits."""
DRAWN = 3
"""Drawn points of each sort (real, complex) added to the three fixed ones."""
_SEPARATE = 10.0**-35
"""Relative difference above which two values are certainly different at this precision."""
_MAX_LOG2 = 1 << 20
"""Largest magnitude computed, as a power of two (beyond: too large to decide)."""

_local = threading.local()


def _context() -> Any:
    """A private mpmath context per thread: mpmath's global ``mp`` is shared state."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        import mpmath  # type: ignore[import-untyped]

        ctx = mpmath.MPContext()
        ctx.dps = DIGITS
        _local.ctx = ctx
    return ctx


def _point(name: str, index: int, ctx: Any) -> Any:
    """The value variable ``name`` takes at point ``index`` (the same for both answers)."""
    spread = ctx.mpf(zlib.crc32(name.encode()) % 9973) / 9973
    if index == 0:
        return ctx.mpf("0.5") + spread
    if index == 1:
        return -(ctx.mpf("0.7") + spread)
    return ctx.mpc(ctx.mpf("0.3") + spread, ctx.mpf("0.9"))


def _drawn(names: list[str], nodes: tuple[Node, ...], ctx: Any) -> list[dict[str, Any]]:
    """Points drawn from a hash of the two trees: the same for the same question (verdicts are
    reproducible), but not predictable from the code alone, so an answer cannot be built to
    differ from the reference only away from the points (``(x - p_0)(x - p_1)(x - p_2)``
    vanishes at the fixed points). Each variable gets its own sign and size, so identities that
    hold only when all variables share a sign (``\\ln(x/y) = \\ln x - \\ln y``) or only
    near 0 (``\\arcsin(\\sin x) = x``) come apart."""
    seed = hashlib.sha256(repr(nodes).encode()).digest()
    draw = random.Random(seed)

    def part(low: int, high: int) -> Any:
        # a rational with a prime denominator, away from 0 and from small simple fractions
        value = ctx.mpf(draw.randint(low, high)) / 997
        return value if draw.random() < 0.5 else -value

    drawn = [{name: part(150, 3000) for name in names} for _ in range(DRAWN)]
    for _ in range(DRAWN):
        drawn.append({name: ctx.mpc(part(150, 3000), part(100, 1400)) for name in names})
    return drawn


def points(*nodes: Node) -> list[dict[str, Any]]:
    """The points at which to compare: one when there are no variables, else three fixed ones
    (positive, negative, complex) and six drawn from a hash of the trees (three real, three
    complex)."""
    ctx = _context()
    names = sorted(set().union(*(symbols(node) for node in nodes)))
    if not names:
        return [{}]
    fixed = [{name: _point(name, index, ctx) for name in names} for index in range(3)]
    return fixed + _drawn(names, nodes, ctx)


def symbols(node: Node) -> set[str]:
    """The variable names in a tree."""
    if node[0] == "s":
        return {node[1]}
    found: set[str] = set()
    for child in node[1:]:
        if isinstance(child, tuple) and child and isinstance(child[0], str):
            found |= symbols(child)
        elif isinstance(child, tuple):
            for item in child:
                if isinstance(item, tuple):
                    found |= symbols(item)
    return found


_FUNCTIONS = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "ln": "ln",
    "exp": "exp",
}


def value(node: Node, point: dict[str, Any]) -> Any:
    """The value of ``node`` at ``point`` (an mpf or mpc). Raises Undefined or TooLarge."""
    ctx = _context()
    result = _value(node, point, ctx)
    if ctx.isnan(result) or ctx.isinf(result):
        raise Undefined("the value is not a finite number")
    return result


def _big(x: Any, ctx: Any) -> Any:
    if x != 0 and abs(ctx.mag(x)) > _MAX_LOG2:
        raise TooLarge("a value in the answer is too large to decide")
    return x


def _value(node: Node, point: dict[str, Any], ctx: Any) -> Any:
    tag = node[0]
    if tag == "n":
        fraction = node[1]
        return ctx.mpf(fraction.numerator) / fraction.denominator
    if tag == "s":
        return point[node[1]]
    if tag == "c":
        return {"pi": ctx.pi, "e": ctx.e, "i": ctx.mpc(0, 1)}[node[1]]
    if tag == "+":
        return _big(ctx.fsum(_value(child, point, ctx) for child in node[1]), ctx)
    if tag == "*":
        product = ctx.mpf(1)
        for child in node[1]:
            product = _big(product * _value(child, point, ctx), ctx)
        return product
    if tag == "neg":
        return -_value(node[1], point, ctx)
    if tag == "/":
        top, bottom = _value(node[1], point, ctx), _value(node[2], point, ctx)
        if bottom == 0:
            raise Undefined("division by zero")
        return _big(top / bottom, ctx)
    if tag == "^":
        return _power(_value(node[1], point, ctx), _value(node[2], point, ctx), ctx)
    if tag == "root":
        inner, index = _value(node[1], point, ctx), node[2]
        if index % 2 and ctx.im(inner) == 0 and inner < 0:
            return -ctx.root(-inner, index)  # the real odd root, as written with \sqrt[3]{}
        return ctx.sqrt(inner) if index == 2 else ctx.root(inner, index)
    if tag == "abs":
        return abs(_value(node[1], point, ctx))
    if tag == "!":
        return ctx.factorial(whole(node[1], "a factorial"))
    if tag == "binom":
        return ctx.binomial(whole(node[1], "a binomial"), whole(node[2], "a binomial"))
    if tag == "f":
        return _function(node[1], _value(node[2], point, ctx), ctx)
    if tag == "log":
        argument = _value(node[2], point, ctx)
        if argument == 0:
            raise Undefined("the logarithm of zero")
        if node[1] is None:
            return ctx.ln(argument)
        base = _value(node[1], point, ctx)
        if base == 0 or base == 1:
            raise Undefined("a logarithm to base 0 or 1")
        return ctx.ln(argument) / ctx.ln(base)
    raise Undefined(f"{tag!r} has no numeric value")


def _power(base: Any, exponent: Any, ctx: Any) -> Any:
    if base == 0:
        if ctx.re(exponent) <= 0:
            raise Undefined("0 raised to a power that is not positive")
        return ctx.mpf(0)
    if abs(exponent) * max(abs(ctx.log(abs(base), 2)), 1) > _MAX_LOG2:
        raise TooLarge("a power in the answer is too large to decide")
    return ctx.power(base, exponent)


def _function(name: str, argument: Any, ctx: Any) -> Any:
    if name == "ln":
        if argument == 0:
            raise Undefined("the logarithm of zero")
        return ctx.ln(argument)
    if abs(ctx.im(argument)) > _MAX_LOG2 or (name == "exp" and abs(argument) > _MAX_LOG2):
        raise TooLarge("a value in the answer is too large to decide")
    try:
        return getattr(ctx, _FUNCTIONS[name])(argument)
    except (ZeroDivisionError, ValueError) as exc:
        raise Undefined(f"{name} is undefined here") from exc


def close(a: Any, b: Any) -> bool:
    """Whether two values agree to the working precision (relative to the larger, or 1)."""
    ctx = _context()
    scale = max(abs(a), abs(b), ctx.mpf(1))
    return bool(abs(a - b) <= _SEPARATE * scale)


def within(got: Any, expected: Any, relative: float) -> bool:
    """Whether ``got`` is within ``relative`` of ``expected`` (``|got - e| <= r |e|``)."""
    return bool(abs(got - expected) <= relative * abs(expected))
