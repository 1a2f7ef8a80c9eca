"""A hand-written recursive-descent reader for math answers (LaTeX or plain notation).

Model text becomes a small tree of plain tuples, never code: nothing here calls ``eval``,
``exec``, sympy's ``parse_expr``/``sympify`` or latex2sympy. Only a fixed list of commands is
understood; anything else (``\\phantom``, ``\\not``, ``\\neq``, ``\\pm``, ``...``, words,
``__import__``, ``lambda``, attribute access) is :class:`Unreadable`, which the kind refutes.
Hard caps (length, nesting depth, exponent towers, digits) raise :class:`TooLarge`, which the
kind reports as ``inconclusive``: too large to decide, never a pass.

Nodes (first element is the tag):

- values: ``("n", Fraction)``, ``("s", name)`` a variable, ``("c", "pi"|"e"|"i")``,
  ``("inf", 1|-1)`` (only as a whole value or an interval end);
- operations: ``("+", terms)``, ``("*", factors)``, ``("neg", x)``, ``("/", a, b)``,
  ``("^", a, b)``, ``("!", x)``, ``("root", x, n)`` (real n-th root), ``("f", name, x)``,
  ``("log", base, x)``, ``("abs", x)``, ``("binom", n, k)``;
- answers: ``("list", items)`` (bare ``1, 2``), ``("set", items)``, ``("tuple", items)``,
  ``("interval", lo, hi, lo_closed, hi_closed)``, ``("union", parts)``, ``("eq", a, b)``,
  ``("rel", op, a, b)`` (``<``, ``>``, ``<=``, ``>=``), ``("unit", x, name)`` (``%``, ``°``,
  ``\\text{cm}``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from assay.checks._numbers import normalize

Node = tuple[Any, ...]

MAX_CHARS = 1000
"""Longest answer read, after extraction."""
MAX_DEPTH = 40
"""Deepest nesting of groups, operators and signs."""
MAX_TOWER = 3
"""Most exponents nested inside one another (``2^{2^{2^2}}`` is three)."""
MAX_DIGITS = 400
"""Longest number literal."""
MAX_ITEMS = 64
"""Most elements in one list, set or tuple."""
MAX_ROOT = 64
"""Largest index of ``\\sqrt[n]{}``."""


class Unreadable(ValueError):
    """The text is not an answer this grammar reads: a finding about the answer (refuted)."""


class TooLarge(ValueError):
    """A cap was hit: too large to decide (inconclusive, never a pass)."""


_FUNCTIONS = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "ln": "ln",
    "exp": "exp",
    "log": "log",
}
_TEXT_COMMANDS = frozenset(
    ["text", "textrm", "textbf", "textit", "mathrm", "mathbf", "mathit", "mbox", "textnormal"]
)
_TIMES = frozenset(["cdot", "times", "ast"])
_NOT_FACTORS = frozenset(["div", "cup", "right", "rvert", "rbrace"])
_RELATIONS = {
    "=": "=",
    "<": "<",
    ">": ">",
    "<=": "<=",
    ">=": ">=",
    "\\le": "<=",
    "\\leq": "<=",
    "\\leqslant": "<=",
    "\\ge": ">=",
    "\\geq": ">=",
    "\\geqslant": ">=",
    "\\lt": "<",
    "\\gt": ">",
}
_SKIP = re.compile(
    r"(?:\s+|\\[,;:! ]|~|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)\s*\."
    r"|\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg|displaystyle"
    r"|textstyle|quad|qquad)(?![A-Za-z])|\\(?:text|mbox|mathrm)\s*\{\s*\})+"
)
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+(?![0-9.]))?")
_MIXED = re.compile(r"\\frac\s*(?:\{\s*[0-9]+\s*\}|[0-9])\s*(?:\{\s*[0-9]+\s*\}|[0-9])")
_LETTERS = re.compile(r"[A-Za-z]+")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)", re.DOTALL)
_SUBSCRIPT = re.compile(r"_(?:([A-Za-z0-9])|\{\s*([A-Za-z0-9]{1,8})\s*\})")
_UNIT_WORD = re.compile(r"[A-Za-z]{1,20}(?:[/.][A-Za-z]{1,20}){0,3}|%")
_HEDGES = frozenset(
    re.findall(
        r"\w+",
        "or and not no none maybe about approximately approx roughly nearly almost around over "
        "under more less than least most at between to either neither possibly probably wrong "
        "incorrect false true plus minus times",
    )
)
"""Words that would turn a value into a hedge if read as its unit (``5 \\text{ or more}``)."""
_SANDWICH = re.compile(r"[0-9](?![eE][-+]?[0-9])[A-Za-z]{1,2}[0-9]")
"""``0x10``, ``2x3``: a letter glued between digits reads as hex or as a product; refused."""
_BRACED_GROUPS = re.compile(r"(?<![0-9.])[0-9]{1,3}(?:\{,\}[0-9]{3})+(?![0-9])")
"""``1{,}000{,}000``: thousands groups of exactly three digits (``{,}`` is also a decimal comma)."""
_SCALE_WORDS = frozenset(
    re.findall(
        r"\w+",
        "thousand thousands million millions billion billions trillion trillions hundred hundreds "
        "dozen dozens score gross lakh lakhs crore crores half halves third thirds quarter "
        "quarters fourth fourths fifth fifths sixth sixths seventh sevenths eighth eighths ninth "
        "ninths tenth tenths hundredth hundredths thousandth thousandths millionth millionths "
        "squared cubed square cube power powers negative negatives inverse inverses reciprocal "
        "reciprocals opposite fold ppm ppb ppt permille pi zero one two three four five six "
        "seven eight nine ten eleven twelve twenty fifty percentile",
    )
)
"""Words that change the value they follow (``5\\text{ thousand}`` is 5000, ``3\\text{ squared}``
is 9): never a unit, so ``allow_units`` cannot drop them."""
_GROUPED = re.compile(r"[-+]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_UNICODE = {
    "π": "\\pi ",
    "∞": "\\infty ",
    "√": "\\sqrt",
    "·": "\\cdot ",
    "⋅": "\\cdot ",
    "×": "\\times ",
    "÷": "\\div ",
    "≤": "\\le ",
    "≥": "\\ge ",
    "∪": "\\cup ",
    "∅": "\\emptyset ",
}
_ALIASES = (
    ("\\dfrac", "\\frac"),
    ("\\tfrac", "\\frac"),
    ("\\cfrac", "\\frac"),
    ("\\dbinom", "\\binom"),
    ("\\tbinom", "\\binom"),
)


def prepare(text: str) -> str:
    """The answer with Unicode forms mapped (digits of any script, dashes, ``π``, ``√``),
    LaTeX aliases unified (``\\dfrac`` is ``\\frac``) and thousands separators removed from a
    number that is the whole answer (``1,000``, ``1{,}000``)."""
    text = normalize(text)
    if not text.isascii():
        text = "".join(_UNICODE.get(char, char) for char in text)
    for alias, name in _ALIASES:
        if alias in text:
            text = re.sub(re.escape(alias) + r"(?![A-Za-z])", name.replace("\\", "\\\\"), text)
    if "{,}" in text:  # 1{,}000 groups thousands; 12{,}3456 or 3{,}14 (a decimal comma) stay
        text = _BRACED_GROUPS.sub(lambda match: match.group(0).replace("{,}", ""), text)
    stripped = text.strip()
    if "," in stripped and _GROUPED.fullmatch(stripped):
        text = stripped.replace(",", "")
    return text


def parse(text: str) -> Node:
    """The tree of one answer. Raises Unreadable or TooLarge."""
    if len(text) > 4 * MAX_CHARS:
        raise TooLarge(f"the answer is {len(text)} characters long (the limit is {MAX_CHARS})")
    text = prepare(text)
    if len(text) > MAX_CHARS:
        raise TooLarge(f"the answer is {len(text)} characters long (the limit is {MAX_CHARS})")
    if not text.strip():
        raise Unreadable("the answer is empty")
    if (glued := _SANDWICH.search(text)) is not None:
        raise Unreadable(
            f"{glued.group(0)!r} is ambiguous (a hexadecimal number or a product): "
            "write an explicit operator"
        )
    parser = _Parser(text)
    node = parser.answer()
    return _finish(node)


class _Parser:
    """Scannerless recursive descent over ``text``; ``at`` is the read position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.depth = 0
        self.tower = 0
        self.abs_open = 0

    # -- reading helpers -------------------------------------------------------------------

    def _ws(self) -> None:
        match = _SKIP.match(self.text, self.at)
        if match is not None:
            self.at = match.end()

    def _peek(self) -> str:
        """The next token without consuming it: a command, ``**``, ``<=``, or one character."""
        self._ws()
        if self.at >= len(self.text):
            return ""
        char = self.text[self.at]
        if char == "\\":
            match = _COMMAND.match(self.text, self.at)
            return match.group(0) if match else "\\"
        pair = self.text[self.at : self.at + 2]
        if pair in ("**", "<=", ">=", "!=", "=="):
            return pair
        return char

    def _take(self, token: str) -> None:
        self._ws()
        assert self.text.startswith(token, self.at)
        self.at += len(token)

    def _expect(self, token: str, why: str) -> None:
        if self._peek() != token:
            found = self._peek() or "the end"
            raise Unreadable(f"expected {token!r} {why}, found {found!r}")
        self._take(token)

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooLarge(f"the answer nests more than {MAX_DEPTH} levels deep")

    def _leave(self) -> None:
        self.depth -= 1

    # -- grammar ---------------------------------------------------------------------------

    def answer(self) -> Node:
        items = self._items(("",))
        if self._peek() != "":
            raise Unreadable(f"unexpected {self._peek()!r} at position {self.at}")
        return items[0] if len(items) == 1 else ("list", tuple(items))

    def _items(self, closers: tuple[str, ...]) -> list[Node]:
        """Comma-separated items up to (not including) one of ``closers``."""
        items = [self._item()]
        while self._peek() == ",":
            self._take(",")
            items.append(self._item())
            if len(items) > MAX_ITEMS:
                raise TooLarge(f"more than {MAX_ITEMS} items in one list")
        if self._peek() not in closers:
            raise Unreadable(f"unexpected {self._peek()!r} at position {self.at}")
        return items

    def _item(self) -> Node:
        self._enter()
        parts = [self._relation()]
        while self._peek() == "\\cup":
            self._take("\\cup")
            parts.append(self._relation())
        self._leave()
        return parts[0] if len(parts) == 1 else ("union", tuple(parts))

    def _relation(self) -> Node:
        left = self._sum()
        token = self._peek()
        if token in ("!=", "=="):
            raise Unreadable(f"{token!r} is not a supported relation")
        op = _RELATIONS.get(token)
        if op is None:
            return left
        self._take(token)
        right = self._sum()
        if _RELATIONS.get(self._peek()) is not None:
            raise Unreadable("a chained relation (a = b = c) is not one answer")
        return ("eq", left, right) if op == "=" else ("rel", op, left, right)

    def _sum(self) -> Node:
        self._enter()
        terms = [self._term()]
        while (token := self._peek()) in ("+", "-"):
            self._take(token)
            term = self._term()
            terms.append(term if token == "+" else ("neg", term))
        self._leave()
        return terms[0] if len(terms) == 1 else ("+", tuple(terms))

    def _term(self) -> Node:
        node = self._unary()
        divided = False  # the last operator was a written / or \div: 1/2x is ambiguous
        while True:
            token = self._peek()
            if token in ("*", "\\cdot", "\\times", "\\ast"):
                self._take(token)
                node, divided = ("*", (node, self._unary())), False
            elif token in ("/", "\\div"):
                self._take(token)
                node, divided = ("/", node, self._unary()), True
            elif self._starts_factor(token):
                if _ends_in_literal(node) and (
                    token[:1].isdigit() or token == "." or _MIXED.match(self.text, self.at)
                ):
                    raise Unreadable(
                        "two numbers side by side (like 2 3 or a mixed number 2\\frac{1}{2}) "
                        "are ambiguous: write one number or an explicit operator"
                    )
                right = self._power()
                if _starts_with_literal(right) and (
                    _ends_in_literal(node) or _glues_to_a_number(_last_factor(node))
                ):
                    raise Unreadable(
                        "a number written right after another number, a fraction, a root or "
                        "a power (like 4\\text{2}, 4{2}, \\frac{1}{2}3 or x^2 3) is ambiguous: "
                        "write an explicit operator"
                    )
                if token == "{" and _ends_in_literal(node) and _literal_fraction(right):
                    raise Unreadable(
                        "a number before a fraction of numbers (2{\\frac{1}{2}}) reads as a "
                        "mixed number: write one number or an explicit operator"
                    )
                if divided and right[0] != "word":
                    raise Unreadable(
                        "a product written after '/' (like 1/2x or 6/2(1+2)) is ambiguous: "
                        "use \\frac or parentheses"
                    )
                node = ("*", (node, right))
            else:
                return node

    def _starts_factor(self, token: str) -> bool:
        if not token:
            return False
        if token[0].isalnum() or token in ("(", "{", ".", "%", "\\%", "°", "\\$"):
            return True
        if token == "|":
            return self.abs_open == 0
        if token.startswith("\\") and len(token) > 2:
            name = token[1:]
            if name == "vert":
                return self.abs_open == 0
            return name not in _TIMES and token not in _RELATIONS and name not in _NOT_FACTORS
        return token in ("\\{", "\\|")

    def _unary(self) -> Node:
        token = self._peek()
        if token in ("-", "+"):
            self._enter()
            self._take(token)
            operand = self._unary()
            self._leave()
            return ("neg", operand) if token == "-" else operand
        return self._power()

    def _power(self) -> Node:
        node = self._postfix(self._primary())
        token = self._peek()
        if token in ("^", "**"):
            self._take(token)
            if self._peek() == "\\circ" or self.text.startswith("{\\circ}", self.at):
                self.at = self.text.index("circ", self.at) + 4
                if self.text.startswith("}", self.at):
                    self.at += 1
                return ("*", (node, ("word", "°")))
            node = self._postfix(("^", node, self._exponent()))
        return node

    def _postfix(self, node: Node) -> Node:
        while self._peek() == "!":
            if self.text.startswith("!!", self.at) or self.text.startswith("!=", self.at):
                raise Unreadable("'!!' and '!=' are not supported")
            self._take("!")
            node = ("!", node)
        return node

    def _exponent(self) -> Node:
        self.tower += 1
        if self.tower > MAX_TOWER:
            raise TooLarge(f"a tower of more than {MAX_TOWER} exponents is too large to decide")
        self._enter()
        token = self._peek()
        if token in ("-", "+"):
            self._take(token)
            inner = self._exponent_atom()
            node = ("neg", inner) if token == "-" else inner
        else:
            node = self._exponent_atom()
        if self._peek() in ("^", "**"):
            self._take(self._peek())
            node = ("^", node, self._exponent())
        self._leave()
        self.tower -= 1
        return node

    def _exponent_atom(self) -> Node:
        token = self._peek()
        if token.isalpha():  # one letter: e^x y is e^x times y
            self.at += 1
            return _letter(token)
        return self._postfix(self._primary())

    def _primary(self) -> Node:
        self._enter()
        try:
            return self._primary_inner()
        finally:
            self._leave()

    def _primary_inner(self) -> Node:
        token = self._peek()
        if not token:
            raise Unreadable("the answer ends where a value was expected")
        if token[0].isdigit() or token == ".":
            return self._number()
        if token.isalpha():
            return self._letters()
        if token == "(":
            return self._group("(")
        if token == "[":
            return self._group("[")
        if token == "{":
            self._take("{")
            items = self._items(("}",))
            self._take("}")
            return items[0] if len(items) == 1 else ("list", tuple(items))
        if token == "|":
            self._take("|")
            self.abs_open += 1
            inner = self._sum()
            self.abs_open -= 1
            self._expect("|", "to close |...|")
            return ("abs", inner)
        if token in ("%", "\\%", "°", "\\$"):
            self._take(token)
            return ("word", "$" if token == "\\$" else token.lstrip("\\"))
        if token.startswith("\\"):
            return self._command(token)
        raise Unreadable(f"unexpected {token!r} at position {self.at}")

    def _number(self) -> Node:
        self._ws()
        match = _NUMBER.match(self.text, self.at)
        if match is None:
            raise Unreadable(f"unexpected {self.text[self.at]!r} at position {self.at}")
        written = match.group(0)
        if len(written) > MAX_DIGITS:
            raise TooLarge(f"a number of {len(written)} digits is too large to decide")
        self.at = match.end()
        mantissa, _, exponent = written.lower().partition("e")
        value = Fraction(mantissa)
        if exponent:
            power = int(exponent)
            if abs(power) > MAX_DIGITS:
                raise TooLarge(f"{written!r} is too large to decide")
            value *= Fraction(10) ** power
        return ("n", value, "literal")

    def _letters(self) -> Node:
        match = _LETTERS.match(self.text, self.at)
        assert match is not None
        word = match.group(0)
        if word == "pi":
            self.at = match.end()
            return ("c", "pi")
        if word in _FUNCTIONS:
            self.at = match.end()
            return self._function(_FUNCTIONS[word])
        if word == "sqrt":
            self.at = match.end()
            return ("root", self._argument(), 2)
        if len(word) > 2:
            raise Unreadable(f"the word {word!r} is not part of a math answer")
        self.at += 1  # one letter; the next one is read as the next factor
        letter = word[0]
        subscript = _SUBSCRIPT.match(self.text, self.at)
        if subscript is not None:
            self.at = subscript.end()
            return ("s", f"{letter}_{subscript.group(1) or subscript.group(2)}")
        return _letter(letter)

    def _group(self, opener: str) -> Node:
        self._take(opener)
        items = self._items((")", "]"))
        closer = self._peek()
        self._take(closer)
        if len(items) == 1:
            if (opener, closer) in (("(", ")"), ("[", "]")):
                return items[0]
            raise Unreadable(f"{opener}...{closer} around one value is not an interval")
        if opener == "(" and closer == ")":
            return ("tuple", tuple(items))
        if len(items) != 2:
            raise Unreadable(f"an interval has two ends, not {len(items)}")
        return ("interval", items[0], items[1], opener == "[", closer == "]")

    def _braced(self, final: bool = False) -> Node:
        """One LaTeX argument: ``{...}``, or a single digit, letter or command (``\\frac12``).
        ``final``: the command's last argument, which a digit must not follow (``\\frac123``)."""
        self._ws()
        if self.at >= len(self.text):
            raise Unreadable("a command is missing its argument")
        char = self.text[self.at]
        if char == "{":
            self._take("{")
            node = self._sum()
            self._expect("}", "to close {...}")
            return node
        if char.isdigit():
            self.at += 1
            if final and self.text[self.at : self.at + 1].isdigit():
                raise Unreadable(
                    "a command's one-digit argument followed by a digit (\\frac123, "
                    "\\sqrt42) is ambiguous: use braces"
                )
            return ("n", Fraction(int(char)), "literal")
        if char.isalpha():
            self.at += 1
            return _letter(char)
        if char == "\\":
            return self._primary()
        raise Unreadable(f"unexpected {char!r} where a command's argument was expected")

    def _argument(self) -> Node:
        """A function's argument: ``(...)``, ``{...}``, or the product written after it."""
        token = self._peek()
        if token == "(":
            return self._group("(")
        if token == "{":
            return self._braced()
        node = self._power()
        while self._starts_factor(self._peek()) and not self._peek().startswith("\\"):
            node = ("*", (node, self._power()))
        return node

    def _function(self, name: str) -> Node:
        power = None
        if self._peek() == "^":
            self._take("^")
            power = self._exponent()
            if power in (("neg", ("n", Fraction(1), "literal")),):
                raise Unreadable("f^{-1} is ambiguous (inverse or reciprocal): write arcsin or 1/f")
        base = None
        if name == "log" and self._peek() == "_":
            self._take("_")
            base = self._braced()
        node: Node = (
            ("log", base, self._argument()) if name == "log" else ("f", name, self._argument())
        )
        return node if power is None else ("^", node, power)

    def _text(self) -> Node:
        self._ws()
        if not self.text.startswith("{", self.at):
            raise Unreadable("\\text needs a {...} argument")
        depth, end = 0, self.at
        while end < len(self.text):
            if self.text[end] == "{":
                depth += 1
            elif self.text[end] == "}":
                depth -= 1
                if depth == 0:
                    break
            end += 1
        else:
            raise Unreadable("\\text{...} is not closed")
        content = self.text[self.at + 1 : end].strip()
        self.at = end + 1
        if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?|[A-Za-z]", content):
            return _Parser(content).answer()
        if _UNIT_WORD.fullmatch(content) and not _HEDGES & _words(content):
            if _SCALE_WORDS & _words(content):
                raise Unreadable(
                    f"the word {content!r} changes the value: write the number it means"
                )
            return ("word", content)
        raise Unreadable(f"the text {content!r} is not part of a math answer")

    def _command(self, token: str) -> Node:
        name = token[1:]
        self._take(token)
        if name == "frac":
            return ("/", self._braced(), self._braced(final=True))
        if name == "binom":
            return ("binom", self._braced(), self._braced(final=True))
        if name == "sqrt":
            index = 2
            if self._peek() == "[":
                self._take("[")
                self._ws()
                match = re.compile(r"[0-9]+").match(self.text, self.at)
                if match is None or not 2 <= int(match.group(0)) <= MAX_ROOT:
                    raise Unreadable(f"\\sqrt[n] needs a whole index n from 2 to {MAX_ROOT}")
                index = int(match.group(0))
                self.at = match.end()
                self._expect("]", "to close \\sqrt[n]")
            argument = self._group("(") if self._peek() == "(" else self._braced(final=True)
            return ("root", argument, index)
        if name == "pi":
            return ("c", "pi")
        if name == "infty":
            return ("inf", 1)
        if name in ("emptyset", "varnothing"):
            return ("set", ())
        if name in _FUNCTIONS:
            return self._function(_FUNCTIONS[name])
        if name in _TEXT_COMMANDS:
            return self._text()
        if name in ("{", "lbrace"):
            if self._peek() in ("\\}", "\\rbrace"):
                self._take(self._peek())
                return ("set", ())
            items = self._items(("\\}", "\\rbrace"))
            self._take(self._peek())
            return ("set", tuple(items))
        if name in ("lvert", "vert"):
            self.abs_open += 1
            inner = self._sum()
            self.abs_open -= 1
            if self._peek() not in ("\\rvert", "\\vert"):
                raise Unreadable("\\lvert is not closed by \\rvert")
            self._take(self._peek())
            return ("abs", inner)
        if name in ("pm", "mp"):
            raise Unreadable("'±' gives two values, not one: list them")
        raise Unreadable(f"the command \\{name} is not supported in a math answer")


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z]+", text)}


def _letter(letter: str) -> Node:
    if letter == "e":
        return ("c", "e")
    if letter == "i":
        return ("c", "i")
    return ("s", letter)


def _ends_in_literal(node: Node) -> bool:
    """Whether the last factor written in ``node`` is a number literal (``2``, ``x \\cdot 2``)."""
    while node[0] in ("*", "neg"):  # -2 3 and -2\frac{1}{2} are two numbers side by side too
        node = node[1][-1] if node[0] == "*" else node[1]
    return node[0] == "n" and len(node) > 2


def _last_factor(node: Node) -> Node:
    """The last factor written in a product (``x \\cdot \\sqrt{2}`` ends in the root)."""
    while node[0] in ("*", "neg"):
        node = node[1][-1] if node[0] == "*" else node[1]
    return node


def _glues_to_a_number(node: Node) -> bool:
    """Whether a number written right after ``node`` would read as part of it: after a fraction,
    a root, a binomial or a factorial (``\\frac{1}{2}3``, ``\\sqrt{2}3``, ``3!2``), or after a
    power whose exponent ends in a number (``x^2 3``, which reads as ``x^{23}``)."""
    if node[0] == "^":
        return _ends_in_literal(node[2])
    return node[0] in ("/", "root", "binom", "!")


def _literal_fraction(node: Node) -> bool:
    """Whether ``node`` is a fraction of two number literals (``\\frac{1}{2}``)."""
    return node[0] == "/" and all(part[0] == "n" and len(part) > 2 for part in (node[1], node[2]))


def _starts_with_literal(node: Node) -> bool:
    """Whether the first thing written in ``node`` is a number literal (``2``, ``2^3``, ``2!``)."""
    while node[0] in ("*", "^", "!"):
        node = node[1][0] if node[0] == "*" else node[1]
    return node[0] == "n" and len(node) > 2


_SCALAR_TAGS = frozenset(
    ["n", "s", "c", "+", "*", "neg", "/", "^", "!", "root", "f", "log", "abs", "binom"]
)


def _finish(node: Node) -> Node:
    """Check where words, units and infinities stand, and drop the literal markers."""
    return _answer_node(node)


def _answer_node(node: Node) -> Node:
    tag = node[0]
    if tag in ("list", "set", "tuple", "union"):
        return (tag, tuple(_answer_node(item) for item in node[1]))
    if tag == "interval":
        return ("interval", _end(node[1]), _end(node[2]), node[3], node[4])
    if tag == "eq":
        return ("eq", _answer_node(node[1]), _answer_node(node[2]))
    if tag == "rel":
        return ("rel", node[1], _answer_node(node[2]), _answer_node(node[3]))
    unit, value = _peel_unit(node)
    if unit is not None:
        return ("unit", _value(value), unit)
    return _end(node)


def _end(node: Node) -> Node:
    """A value that may be an infinity (a whole answer or an interval end)."""
    sign = 1
    while node[0] == "neg":
        sign, node = -sign, node[1]
    if node[0] == "inf":
        return ("inf", sign * node[1])
    return _value(node if sign == 1 else ("neg", node))


def _peel_unit(node: Node) -> tuple[str | None, Node]:
    """``5\\text{ cm}`` is (``cm``, 5); a unit is the first or last factor of a product."""
    negated = False
    while node[0] == "neg":
        negated, node = not negated, node[1]
    if node[0] == "word":
        raise Unreadable(f"the text {node[1]!r} has no value with it")
    if node[0] != "*":
        return None, node
    factors = _factors(node)
    words = [i for i, f in enumerate(factors) if f[0] == "word"]
    if not words:
        return None, node
    if len(words) > 1 or words[0] not in (0, len(factors) - 1) or len(factors) < 2:
        raise Unreadable(f"the text {factors[words[0]][1]!r} stands inside the answer")
    word = factors[words[0]][1]
    rest = [f for f in factors if f[0] != "word"]
    value: Node = rest[0] if len(rest) == 1 else ("*", tuple(rest))
    return word, ("neg", value) if negated else value


def _factors(node: Node) -> list[Node]:
    if node[0] == "*":
        return [f for child in node[1] for f in _factors(child)]
    return [node]


def _value(node: Node) -> Node:
    """A scalar expression, with literal markers dropped; words and infinities are refused."""
    tag = node[0]
    if tag == "n":
        return ("n", node[1])
    if tag in ("s", "c"):
        return node
    if tag == "word":
        raise Unreadable(f"the text {node[1]!r} stands inside the answer")
    if tag == "inf":
        raise Unreadable("infinity inside an expression cannot be compared")
    if tag in ("+", "*"):
        return (tag, tuple(_value(child) for child in node[1]))
    if tag in ("neg", "!", "abs"):
        return (tag, _value(node[1]))
    if tag in ("/", "^", "binom"):
        return (tag, _value(node[1]), _value(node[2]))
    if tag == "root":
        return ("root", _value(node[1]), node[2])
    if tag == "f":
        return ("f", node[1], _value(node[2]))
    if tag == "log":
        return ("log", None if node[1] is None else _value(node[1]), _value(node[2]))
    raise Unreadable(f"a {_DESCRIBE.get(tag, tag)} cannot stand inside an expression")


_DESCRIBE = {
    "list": "list",
    "set": "set",
    "tuple": "tuple",
    "interval": "interval",
    "union": "union",
    "eq": "equation",
    "rel": "inequality",
    "unit": "unit",
}


def is_scalar(node: Node) -> bool:
    """True for a node that is one value (not a set, tuple, interval, equation or unit)."""
    return node[0] in _SCALAR_TAGS


def describe(node: Node) -> str:
    """What kind of answer ``node`` is, for messages."""
    if node[0] == "inf":
        return "an infinity"
    if node[0] in _SCALAR_TAGS:
        return "a value"
    return {"eq": "an equation", "rel": "an inequality", "interval": "an interval"}.get(
        node[0], f"a {_DESCRIBE.get(node[0], node[0])}"
    )
