"""Inside the worker process only: sympy expressions built from answer trees, and proofs of
equality. Model text never reaches sympy as text: each node maps to one sympy constructor."""

from __future__ import annotations

from typing import Any

import sympy  # type: ignore[import-untyped]

_FUNCTIONS: dict[str, Any] = {
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "cot": sympy.cot,
    "sec": sympy.sec,
    "csc": sympy.csc,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "atan": sympy.atan,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "ln": sympy.log,
    "exp": sympy.exp,
}
_CONSTANTS = {"pi": sympy.pi, "e": sympy.E, "i": sympy.I}


def build(node: list[Any]) -> Any:
    """The sympy expression of a tree in wire form (lists; numbers as ``["n", hex p, hex q]``)."""
    tag = node[0]
    if tag == "n":
        return sympy.Rational(int(node[1], 16), int(node[2], 16))
    if tag == "s":
        return sympy.Symbol(str(node[1]))
    if tag == "c":
        return _CONSTANTS[node[1]]
    if tag == "+":
        return sympy.Add(*(build(child) for child in node[1]))
    if tag == "*":
        return sympy.Mul(*(build(child) for child in node[1]))
    if tag == "neg":
        return -build(node[1])
    if tag == "/":
        return build(node[1]) / build(node[2])
    if tag == "^":
        return sympy.Pow(build(node[1]), build(node[2]))
    if tag == "root":
        inner, index = build(node[1]), int(node[2])
        return sympy.real_root(inner, index) if index % 2 else sympy.root(inner, index)
    if tag == "abs":
        return sympy.Abs(build(node[1]))
    if tag == "!":
        return sympy.factorial(build(node[1]))
    if tag == "binom":
        return sympy.binomial(build(node[1]), build(node[2]))
    if tag == "f":
        return _FUNCTIONS[node[1]](build(node[2]))
    if tag == "log":
        argument = build(node[2])
        return sympy.log(argument) if node[1] is None else sympy.log(argument, build(node[1]))
    raise ValueError(f"unknown node {tag!r}")


def _steps(difference: Any) -> list[Any]:
    """Cheap, targeted rewrites first; ``simplify`` (slow, general) last."""
    steps: list[Any] = [sympy.expand, sympy.cancel]
    if difference.has(sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc):
        steps.append(sympy.trigsimp)
    if difference.has(sympy.log):
        steps.append(lambda e: sympy.expand_log(e, force=True))
    steps += [sympy.radsimp, sympy.simplify]
    return steps


def warm_up() -> None:
    """Run each rewrite once, so sympy's lazy set-up is not charged to the first check."""
    x = sympy.Symbol("x")
    _is_zero(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - 1)
    _is_zero((x**2 - 1) / (x - 1) - x - 1)
    _is_zero(sympy.log(8) - 3 * sympy.log(2))
    _is_zero(sympy.sqrt(2 + sympy.sqrt(3)) - (sympy.sqrt(6) + sympy.sqrt(2)) / 2)


def _is_zero(difference: Any) -> str:
    if difference == 0:
        return "zero"
    for step in _steps(difference):
        difference = step(difference)
        if difference == 0:
            return "zero"
    if difference.is_number and difference.is_zero is False:
        return "nonzero"
    verdict = difference.equals(0)
    if verdict is True:
        return "zero"
    if verdict is False:
        return "nonzero"
    return "unknown"


def decide(request: dict[str, Any]) -> str:
    """``zero``/``nonzero``/``unknown`` for ``a - b``; for ``ratio``, ``constant`` when a/b is a
    nonzero constant, else ``unknown``."""
    a, b = build(request["a"]), build(request["b"])
    if request["op"] == "zero":
        return _is_zero(a - b)
    for step in (sympy.cancel, sympy.simplify):
        quotient = step(a / b)
        if not quotient.free_symbols and quotient.is_zero is False and quotient.is_finite:
            return "constant"
    return "unknown"
