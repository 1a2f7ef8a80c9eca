"""Finding the one number in an answer, exactly.

The rules close the usual hacks of lenient number matching (a hedge must never read as one
number):

- every digit in the answer belongs to some number, so ``711`` is never read as ``11`` and
  "part 2: 42" is two numbers, not one; digits of every script count: decimal digits of any
  script (``４２``, ``٤٢``) are read as digits, and other numeric characters (``²``, ``½``,
  ``①``, ``Ⅻ``, ``四``) are number tokens that cannot be read exactly;
- number-like words count too: ``nan``, ``inf``, ``Infinity`` (non-finite), spelled numbers
  (``forty-three``), and a magnitude word or suffix after a number (``42 million``, ``42k``)
  makes that number unreadable, never 42;
- a unit written right after a number owns digits only as its exponent (``m^2``, ``s^-1``,
  ``m²``), and only when pint reads the whole unit; letters glued to digits (``or711``,
  ``maybe43``, ``%43``, ``cm3``) own nothing;
- a sign is read only when it is ``+``, ``-`` or a Unicode dash or minus (``−``, ``–``, ``－``);
  ``±42``, ``⁻42``, ``+-42``, ``<42``, ``≥42`` and ``42+`` cannot be read exactly;
- values are exact fractions (``3``, ``3.0``, ``3.00`` and ``6/2`` are the same number; ``0.1`` is
  one tenth, not the float nearest to it);
- ``nan``, ``inf`` and values beyond the float range are non-finite, and so never equal anything.

What cannot be read exactly is never skipped: alone it is refused as unreadable, beside another
number it makes the answer ambiguous. The scan is a few compiled regular expressions over the
text: no process, no sympy; pint is loaded only to confirm a unit that owns exponent digits.
"""

from __future__ import annotations

import html
import re
import unicodedata
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

_DIGIT = re.compile(r"[0-9]")
# Matched from a digit (or the "." of ".5"); the sign is read by hand, which keeps the scan to a
# fast search for the next digit instead of a lookbehind tried at every character.
_NUMBER = re.compile(
    r"""
    (?P<num>[0-9](?:[0-9]|,(?=[0-9]))*(?:\.[0-9]+)?|\.[0-9]+)
    (?:[eE](?P<exp>[-+]?[0-9]+))?
    (?:/(?P<den>[0-9](?:[0-9]|,(?=[0-9]))*(?:\.[0-9]+)?))?
    """,
    re.VERBOSE,
)
# The shape of a lone number: spaces, at most one sign, characters a number is made of (group 1),
# spaces. Cheap to refuse; the number itself is then read by _NUMBER (see _lone_number).
_LONE_SHAPE = re.compile(r"\s*[-+]?([0-9.][0-9.,eE/+-]*)\s*")
_NONFINITE = re.compile(
    r"(?:(?<![0-9A-Za-z_.])[-+])?(?<![A-Za-z])(?:nans?|infinity|infinite|inf|∞)(?![A-Za-z])",
    re.IGNORECASE,
)
_MAGNITUDES = (
    "hundred|thousand|million|billion|trillion|quadrillion|quintillion|lakh|crore|dozen"
    "|bn|mn|mln|bln|mio|mrd"
)
# Words that scale a number written before them, but are ordinary words elsewhere ("score"):
# multipliers and fraction words ("42 hundredths" is 0.42).
_SCALES = (
    _MAGNITUDES + "|gross|score|grand|myriad|mil|bil|lac|tsd|thou|halves|thirds|quarters"
    "|fourths|fifths|sixths|sevenths|eighths|ninths|tenths|hundredths|thousandths"
    "|millionths|billionths|trillionths|squared|cubed|factorial"
)
_SPELLED_NAMES = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    "|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fourty|fifty|sixty"
    "|seventy|eighty|ninety|half|quarter|" + _MAGNITUDES
)
_SPELLED_WORDS = frozenset(
    [*_SPELLED_NAMES.split("|"), *(name + "s" for name in _SPELLED_NAMES.split("|"))]
)
# Spelled numbers written as one word ("fortythree", "FortyThree"): names and nothing else.
_SPELLED_COMPOUND = re.compile(r"(?:" + _SPELLED_NAMES + r")+s?")
_WORD = re.compile(r"[A-Za-z]+")
# Upper-case roman numerals of two letters or more ("XLIII"); a lone "I", "V", "X" is a word.
_ROMAN = re.compile(r"(?=[MDCLXVI]{2})M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
# A magnitude written after a number: "42 million", "42-thousand"; with letters, "42k", "42 M".
_MAGNITUDE_WORD = re.compile(r"[ \t-]?(?:" + _SCALES + r")s?(?![A-Za-z])", re.IGNORECASE)
_MAGNITUDE_LETTER = re.compile(r"[ \t]?(?:MM|[kKMBGT]|tn)(?![A-Za-z])")
# After a currency amount, lower-case letters scale too: "$42m", "£42mm", "€42bn".
_CURRENCY_SCALE = re.compile(r"[ \t]?(?:mm|m|k|b|bn|mn|MM|M|K|B)(?![A-Za-z])")
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
# A unit right after a number. It owns only the digits of its exponents (m^2, s^-1, m²), and only
# once pint reads the whole unit; letters glued to digits ("or711", "cm3") own nothing.
_U = r"[A-Za-zµμΩ°%Å_]"
_EXP = r"(?:(?:\^|\*\*)-?[0-9]{1,2}(?![0-9]|\.[0-9])|[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})"
_UNIT_WORD = re.compile(rf"[ \t]?(?![xX]){_U}+{_EXP}?(?:[ \t]?[/*·][ \t]?{_U}+{_EXP}?)*")
_OWNED = re.compile(r"[0-9⁰¹²³⁴⁵⁶⁷⁸⁹]")
_UNREADABLE_SIGNS = "±∓⁻⁺₋₊<>≤≥≠≮≯⩽⩾≪≫"
# Markup that may stand between a sign and its digits ("-(42)", "$-$42", "-**42**", "-`42`").
_MARKUP = " \t([{$*`_"
# Symbols allowed right before a number: relations that still state the value, and markdown.
_ALLOWED_BEFORE = frozenset("=≈~∼≃≅|:`")
# Words that change the value written after them: signs, negation and functions in prose.
_SIGN_WORDS = frozenset(
    [
        "minus",
        "negative",
        "neg",
        "plus",
        "positive",
        "not",
        "sqrt",
        "cbrt",
        "root",
        "ln",
        "log",
        "lg",
        "exp",
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
    ]
)
# "... of 42": the word before "of" says what is taken of the number.
_OF_WORDS = frozenset(
    [
        "root",
        "log",
        "logarithm",
        "exponential",
        "factorial",
        "reciprocal",
        "inverse",
        "negative",
        "minus",
        "square",
        "cube",
        "sqrt",
        "ln",
        "exp",
        "opposite",
        "half",
        "double",
        "twice",
        "triple",
        "power",
        "percent",
        "fraction",
        "multiple",
        "sine",
        "cosine",
        "tangent",
    ]
)
# LaTeX commands that leave the number after them as it is written.
_LATEX_KEPT = frozenset(
    [
        "boxed",
        "text",
        "textbf",
        "textrm",
        "mathrm",
        "mathbf",
        "mathit",
        "bf",
        "rm",
        "it",
        "displaystyle",
        "quad",
        "qquad",
        "approx",
        "sim",
        "simeq",
        "left",
        "right",
        "fbox",
        "mbox",
    ]
)
# After a number: a plus-minus (group "pm"), or a constant multiplying it (any case: "42 PI").
_AFTER_NUMBER = re.compile(
    r"[ \t]*(?:(?P<pm>±|∓|\+/-|\+-(?![0-9.])|\\pm(?![A-Za-z]))"
    r"|(?i:π|\\?pi(?![A-Za-z])|τ|\\tau(?![A-Za-z])))"
)
_PREFIXED = re.compile(r"0(?:[xX][0-9A-Fa-f_]|[bB][01_]|[oO][0-7_])[0-9A-Za-z_]*")
# Letters that look like Latin ones (UTS 39 confusables, the Cyrillic and Greek part): number
# words are matched after mapping them, so "fоrty" with a Cyrillic "о" is still forty.
_CONFUSABLES = dict(
    zip(
        "аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХЅІЈΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιν",
        "aeopcyxijsdhlqwABEKMHOPCTXSIJABEZHIKMNOPTYXoiv",
        strict=True,
    )
)
_MAX_CHARS = 400
_MAX_SCALE = 400
FLOAT_MAX = int(1.7976931348623157e308)
"""The largest finite double, as an int: beyond it a value is non-finite."""


class _Normal(dict[int, str | None]):
    """``str.translate`` table built on demand: one lookup per distinct non-ASCII character."""

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        if code < 128:
            mapped = char
        elif char in _CONFUSABLES:
            mapped = _CONFUSABLES[char]
        elif char.isdecimal():
            mapped = str(unicodedata.decimal(char))  # ４, ٤, ४, 𝟒: a decimal digit of a script
        elif char in "−➖﹣－" or unicodedata.category(char) == "Pd":
            mapped = "-"
        elif char in "＋﹢➕":
            mapped = "+"
        elif unicodedata.category(char) in ("Zs", "Cf"):
            mapped = " "  # a space, or an invisible character that must not join two tokens
        elif not char.isnumeric() and len(folded := unicodedata.normalize("NFKC", char)) == 1:
            mapped = (
                folded if folded.isascii() else char
            )  # ｍ, ｋ, Ｎ, ．, ％ read as m, k, N, ., %
        else:
            mapped = char
        self[code] = mapped
        return mapped


_NORMAL = _Normal()


class Number(NamedTuple):
    """One number as written in the text, kept as an exact ratio of integers."""

    text: str
    start: int
    end: int
    numerator: int
    denominator: int
    finite: bool = True
    """False for nan, inf, division by zero and values beyond the float range."""
    problem: str | None = None
    """Why this token cannot be read as an exact value (``²``, ``42 million``, ``±4``); None when
    it can. An unreadable token still counts toward "exactly one number"."""

    @property
    def value(self) -> Fraction | None:
        """The exact value, or None when the number is non-finite or unreadable."""
        if not self.finite or self.problem is not None:
            return None
        return Fraction(self.numerator, self.denominator)

    def equals(self, expected: int | float) -> bool:
        """Exact for an int; at double precision for a float (the nearest double to the value)."""
        if not self.finite or self.problem is not None:
            return False
        if isinstance(expected, int):
            return self.numerator == expected * self.denominator
        return self.numerator / self.denominator == expected


def _exact(text: str, start: int, end: int, numerator: int, denominator: int) -> Number:
    """A finite, readable Number, built without the keyword handling of ``Number(...)`` (a
    Python-level ``__new__``): the reader's commonest result, once per answer check."""
    return _new_tuple(Number, (text, start, end, numerator, denominator, True, None))


_new_tuple = tuple.__new__


class NumberProblem(ValueError):
    """Why the text does not hold exactly one usable number; ``reason`` names the failure."""

    def __init__(self, reason: str, message: str, numbers: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.numbers = numbers
        super().__init__(message)


def normalize(text: str) -> str:
    """HTML entities are decoded (``&minus;42`` is -42, as a renderer shows it), digits of any
    script become ASCII digits, Unicode dashes and minus signs ``-``, Unicode spaces and
    invisible format characters `` ``, Cyrillic and Greek letters that look Latin the Latin
    letter, and a character whose compatibility form is one ASCII character (fullwidth
    ``ｍｉｌｌｉｏｎ``, ``．``, ``％``) that character; numeric characters (``²``, ``½``) and
    combining marks are kept, to be refused. Positions are positions in the result."""
    if "&" in text:
        text = html.unescape(text)
    return text if text.isascii() else text.translate(_NORMAL)


def _unreadable(text: str, start: int, end: int, problem: str) -> Number:
    return Number(text[start:end], start, end, 0, 1, True, problem)


def _sign_problem(text: str, at: int) -> str | None:
    """Why the sign or comparison ``text[at]`` before a number makes it inexact, if it does.

    ``±4``, ``⁻4``, ``<4``, ``≥ 4``; the arrows ``->`` and ``=>`` are not comparisons.
    """
    char = text[at]
    if char == ">" and at and text[at - 1] in "-=":
        return None
    return f"the sign or comparison {char!r} before it cannot be read exactly"


def _detached(text: str, at: int) -> bool:
    """Whether the ``+``/``-`` at ``text[at]``, written apart from the number after it, is a sign
    (``= - 42``, ``- 42`` at the start) rather than an operator between two values (``3 - 4``)."""
    while at and text[at - 1] in " \t":
        at -= 1
    return not at or not (text[at - 1].isalnum() or text[at - 1] in ")]}")


def _word_before(text: str, at: int) -> tuple[int, str]:
    """The run of letters ending at ``text[at]`` and where it starts."""
    begin = at
    while begin and text[begin - 1].isalpha():
        begin -= 1
    return begin, text[begin : at + 1]


def _before_problem(text: str, start: int, signed: bool) -> tuple[int, str] | None:
    """Why what stands before the number at ``text[start:]`` (its sign included) keeps it from
    being read exactly, and where that begins; None when nothing does.

    A second sign, a sign set apart by spaces or markup (``- 42``, ``-(42)``, ``$-$42``), a
    comparison (``≥42``), any other operator or modifier symbol (``√42``, ``e^42``, ``⁒42``),
    a combining mark, a sign word (``minus 42``), a function or LaTeX command (``exp(42)``,
    ``\\sqrt{42}``); relations that state the value (``=``, ``≈``, ``->``) are fine.
    """
    at = start - 1
    while at >= 0:  # the last character before the number that is not a space or markup
        char = text[at]
        if char in _MARKUP:
            at -= 1
        elif char in ",;:! " and at and text[at - 1] == "\\":  # LaTeX spacing: \, \; \!
            at -= 2
        else:
            break
    if at < 0:
        return None
    char = text[at]
    skipped = at < start - 1
    if char in "+-":
        if signed:
            if not skipped or _detached(text, at):
                return at, "it has two signs"
            return None
        if skipped and _detached(text, at):
            return at, "a sign apart from its number"
        return None
    if char in _UNREADABLE_SIGNS:
        problem = _sign_problem(text, at)
        return (at, problem) if problem else None
    if char == "^":
        return at, "a power or operator before it cannot be read exactly"
    if char.isalpha() and char.isascii():
        begin, word = _word_before(text, at)
        if begin and text[begin - 1] == "\\":
            if word in _LATEX_KEPT:
                return None
            return begin - 1, f"the command \\{word} applied to it cannot be read exactly"
        lowered = word.lower()
        if lowered in _SIGN_WORDS:
            return begin, f"the sign or function word {word!r} cannot be read exactly"
        if lowered == "of" and (previous := text[:begin].rstrip(" \t")):
            first, owner = _word_before(previous, len(previous) - 1)
            if owner.lower() in _OF_WORDS:
                return first, f"'{owner} of' before it cannot be read exactly"
        if text[at + 1] == "(":
            return begin, f"the function {word}(...) applied to it cannot be read exactly"
        if text[at + 1] == "*":
            return begin, "a product or power before it cannot be read exactly"
        return None
    if char > "\x7f" and char not in _ALLOWED_BEFORE:
        category = unicodedata.category(char)
        if category in ("Mn", "Me", "Mc"):
            return at, "a combining mark before it cannot be read exactly"
        if category in ("Sm", "Sk") and not 0x2190 <= ord(char) <= 0x21FF:
            return at, f"the symbol {char!r} before it cannot be read exactly"
        if category == "Lm" or 0x2500 <= ord(char) <= 0x257F:  # "ー42", "─42" look like signs
            return at, f"the mark {char!r} before it cannot be read exactly"
    return None


_AFTER_FIRST = "+ \t\\pP"
"""The ASCII characters ``_after_problem`` can object to after a number; it is called only for
these and non-ASCII ones (the rest, ``.``, ``}``, a letter, never make a number inexact there)."""


def _after_problem(text: str, end: int) -> tuple[int, str] | None:
    """Why what follows the number ending at ``text[end]`` keeps it from being read exactly, and
    where that ends: ``42+`` (a bound), ``42±``, ``42 +/-``, ``42π``, ``42\\pi``, a combining
    mark drawn over it (``42⃠``)."""
    char = text[end]
    if char == "+" and not text[end + 1 : end + 2].isdigit() and text[end + 1 : end + 2] != "/":
        return end + 1, "a bound, not one value"
    if char in " \t+±∓\\πpPτ" and (found := _AFTER_NUMBER.match(text, end)) is not None:
        if found.group("pm") is not None:
            return found.end(), "a plus-minus after it is not one value"
        return found.end(), "a constant multiplying it cannot be read exactly"
    if char > "\x7f" and unicodedata.category(char) in ("Mn", "Me", "Mc"):
        return end + 1, "a combining mark on it cannot be read exactly"
    return None


def _parse(text: str, match: re.Match[str]) -> Number:
    start, end = match.span()
    sign = None
    if start and text[start - 1] in "+-":
        before = text[start - 2] if start > 1 else " "
        if not (before.isalnum() or before in "_."):  # "3-4" is two numbers, "x=-4" is -4
            sign = text[start - 1]
            start -= 1
    if end - start > _MAX_CHARS:
        raise NumberProblem("malformed", f"a number of {end - start} characters is too long")
    if start and (problem := _before_problem(text, start, sign is not None)):
        at, why = problem
        return _unreadable(text, at, end, f"{text[at:end]!r}: {why}")
    if (
        end < len(text)
        and ((following := text[end]) in _AFTER_FIRST or following > "\x7f")
        and (after := _after_problem(text, end))
    ):
        return _unreadable(text, start, after[0], f"{text[start : after[0]]!r}: {after[1]}")
    raw = text[start:end]
    num, exp, den = match.groups()
    if exp is None and den is None and len(num) < 300:  # the common case: a plain decimal
        if num.isdigit():
            value = int(num)
            return _exact(raw, start, end, -value if sign == "-" else value, 1)
        if "," in num:
            num = _ungrouped(num, raw)
        whole, _, decimals = num.partition(".")
        value = int(whole + decimals)
        if not value:
            return _exact(raw, start, end, 0, 1)
        return _exact(raw, start, end, -value if sign == "-" else value, 10 ** len(decimals))
    if "," in num:
        num = _ungrouped(num, raw)
    if den is not None and "," in den:
        den = _ungrouped(den, raw)
    return _parse_scaled(raw, start, end, sign, num, exp, den)


def _ungrouped(part: str, raw: str) -> str:
    """``part`` of the number ``raw`` without its thousands separators, which must group by 3."""
    if not _GROUPED.fullmatch(part):
        raise NumberProblem(
            "malformed",
            f"{raw!r} is not a well-formed number: thousands groups must have 3 digits "
            "(write 1,000,000 or 1000000)",
        )
    return part.replace(",", "")


def _parse_scaled(
    raw: str, start: int, end: int, sign: str | None, num: str, exp: str | None, den: str | None
) -> Number:
    """A number with an exponent or a denominator, or a very long one: bounded before any power
    is computed (``1e99999999`` is non-finite at once, ``0e99999999`` zero)."""
    if den is not None and ("." in num or "." in den or exp is not None):
        raise NumberProblem(
            "malformed", f"{raw!r} is not a simple fraction: write integers, like 3/4"
        )
    whole, _, decimals = num.partition(".")
    digits = (whole + decimals).lstrip("0")
    if not digits:  # zero, whatever its exponent: never compute 10**exponent for it
        if den is not None and not int(den):
            return Number(raw, start, end, 0, 1, finite=False)
        return Number(raw, start, end, 0, 1)
    scale = (int(exp) if exp else 0) - len(decimals)
    order = len(digits) + scale  # the value lies in [10**(order-1), 10**order)
    if not -_MAX_SCALE < order < _MAX_SCALE:
        return Number(raw, start, end, 0, 1, finite=False)  # far outside the float range
    mantissa = int(digits)
    numerator, denominator = (mantissa * 10**scale, 1) if scale >= 0 else (mantissa, 10**-scale)
    if den is not None:
        divisor = int(den)
        if divisor == 0:
            return Number(raw, start, end, 0, 1, finite=False)
        denominator *= divisor
    elif -300 < order < 300:
        return Number(raw, start, end, -numerator if sign == "-" else numerator, denominator)
    if sign == "-":
        numerator = -numerator
    magnitude = abs(numerator)
    too_big = magnitude > FLOAT_MAX * denominator
    if too_big or (0 < magnitude < denominator and magnitude << 1074 < denominator):
        return Number(raw, start, end, 0, 1, finite=False)
    return Number(raw, start, end, numerator, denominator)


def _numeric_characters(text: str) -> list[Number]:
    """Runs of non-ASCII numeric characters (``²``, ``½``, ``①``, ``Ⅻ``, ``四十``): unreadable."""
    found: list[Number] = []
    start = -1
    for index, char in enumerate(text):
        numeric = not char.isascii() and char.isnumeric()
        if numeric and start < 0:
            start = index
        elif not numeric and start >= 0:
            found.append(_numeric_run(text, start, index))
            start = -1
    if start >= 0:
        found.append(_numeric_run(text, start, len(text)))
    return found


def _numeric_run(text: str, start: int, end: int) -> Number:
    return _unreadable(
        text, start, end, f"{text[start:end]!r} cannot be read as an exact number here"
    )


def _owns_digits(unit: str) -> bool:
    """True when pint reads ``unit`` (which holds exponent digits) as a unit."""
    from assay.checks._units import parse_unit  # loads pint; only for units with exponents

    return parse_unit(unit.strip()) is not None


def _may_follow(text: str, end: int) -> bool:
    """Whether a magnitude or a unit can start at ``text[end]`` (a letter, space, ``-``, ``%``...)."""
    if end >= len(text):
        return False
    after = text[end]
    return after.isalpha() or after in " \t-%°_" or after > "\x7f"


def _after_currency(text: str, number: Number) -> bool:
    """Whether a currency symbol stands right before ``number`` (``$42``, ``£ 42``, ``-$42``)."""
    at = number.start - 1
    while at >= 0 and text[at] in " \t-+":
        at -= 1
    return at >= 0 and unicodedata.category(text[at]) == "Sc"


def _number_words(text: str, magnitude_letters: bool) -> list[Number]:
    """Words that are numbers: spelled (``forty``, ``fortythree``, ``FortyThree``) and upper-case
    roman numerals of two letters or more (``XLIII``; ``I``, ``V``, ``X`` are words). With a unit
    in the spec, an upper-case word right after a number is left to the unit reader (``MV``)."""
    if not any(map(_may_be_number_word, _WORD.findall(text))):
        return []  # the common case, decided without match objects
    found = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        if not _may_be_number_word(word):
            continue
        if word.isupper() and _ROMAN.fullmatch(word) and word.lower() not in _SPELLED_WORDS:
            before = text[: match.start()].rstrip(" \t")
            if not magnitude_letters and before[-1:].isdigit():
                continue
            why = "is a roman numeral"
        else:
            why = "is a number written in words"
        found.append(_unreadable(text, match.start(), match.end(), f"{word!r} {why}"))
    return found


@lru_cache(maxsize=1 << 14)
def _may_be_number_word(word: str) -> bool:
    """Cached: answers repeat the same few words ("The answer is"), each read once."""
    lowered = word.lower()
    return (
        lowered in _SPELLED_WORDS
        or (len(word) > 5 and _SPELLED_COMPOUND.fullmatch(lowered) is not None)
        or (len(word) > 1 and word.isupper() and _ROMAN.fullmatch(word) is not None)
    )


def _lone_number(text: str) -> list[Number] | None:
    """The commonest answer, one number with nothing but spaces around it (``42``, ``-3.5``),
    read without the scans for words, symbols and units: an ASCII text of that shape holds none,
    so the full scan would find exactly this number (a property test compares the two). None for
    any other text."""
    shape = _LONE_SHAPE.fullmatch(text)
    if shape is None:
        return None  # prose, markup, a unit...: the full scan
    match = _NUMBER.match(text, shape.start(1))
    if match is None or match.end() != shape.end(1):
        return None  # "1 2", "5-", "1,0,": not one number
    return [_parse(text, match)]


def find_numbers(text: str, magnitude_letters: bool = True) -> list[Number]:
    """Every number-like token in ``text`` (already normalized), in order.

    ``magnitude_letters``: a letter suffix that can mean a magnitude (``42k``, ``42 M``) makes
    the number unreadable. Pass False when the caller reads that suffix as a unit with pint.
    """
    if text.isascii() and (lone := _lone_number(text)) is not None:
        return lone
    return _scan(text, magnitude_letters)


def _scan(text: str, magnitude_letters: bool) -> list[Number]:
    """find_numbers on any text: every digit, word and symbol that can be a number is read."""
    found: list[Number] = []
    position = 0
    while (digit := _DIGIT.search(text, position)) is not None:
        start = digit.start()
        if text[start] == "0" and (prefixed := _PREFIXED.match(text, start)) is not None:
            written = prefixed.group(0)
            found.append(
                _unreadable(text, start, prefixed.end(), f"{written!r} is not a decimal number")
            )
            position = prefixed.end()
            continue
        if start and text[start - 1] == "." and not (start > 1 and text[start - 2].isdigit()):
            start -= 1  # ".5"
        match = _NUMBER.match(text, start)
        assert match is not None  # text[start] is a digit, or a "." before one
        found.append(_parse(text, match))
        position = match.end()
    digits = len(found)
    if not text.isascii():
        found += _numeric_characters(text)
    lowered = text.lower()
    if "nan" in lowered or "inf" in lowered or "∞" in text:
        found += [
            Number(m.group(0), m.start(), m.end(), 0, 1, False) for m in _NONFINITE.finditer(text)
        ]
    if not found:
        return []  # spelled numbers alone: there is no number written in digits
    found += _number_words(text, magnitude_letters)
    if len(found) > digits:  # unsorted only when words or characters were added
        found.sort(key=lambda n: n.start)
    elif digits == 1 and not _may_follow(text, found[0].end):
        return found  # the common case: one number, nothing after it to read
    kept: list[Number] = []
    skip_until = -1
    for number in found:
        if number.start < skip_until and number.end <= skip_until:
            continue  # an exponent digit owned by the previous unit, or its magnitude word
        skip_until = -1
        if not number.text[-1:].isdigit():
            kept.append(number)
            continue
        if not _may_follow(text, number.end):
            kept.append(number)  # nothing after it can be a magnitude or a unit
            continue
        magnitude = (
            _MAGNITUDE_WORD.match(text, number.end)
            or (_MAGNITUDE_LETTER.match(text, number.end) if magnitude_letters else None)
            or (
                _CURRENCY_SCALE.match(text, number.end)
                if number.start and _after_currency(text, number)
                else None
            )
        )
        if magnitude is not None:
            written = text[number.start : magnitude.end()]
            kept.append(
                _unreadable(
                    text,
                    number.start,
                    magnitude.end(),
                    f"{written!r} has a magnitude word or suffix",
                )
            )
            skip_until = magnitude.end()
            continue
        kept.append(number)
        unit = _UNIT_WORD.match(text, number.end)
        if unit is not None and _OWNED.search(unit.group(0)) and _owns_digits(unit.group(0)):
            skip_until = unit.end()
    return kept


def one_number(text: str, magnitude_letters: bool = True) -> Number:
    """The single number in ``text``, or NumberProblem saying why there is not exactly one."""
    numbers = find_numbers(text, magnitude_letters)
    if not numbers:
        raise NumberProblem("none", "no number found in the answer: write the value in digits")
    if len(numbers) > 1:
        shown = tuple(n.text for n in numbers)
        listed = ", ".join(shown[:6]) + (", ..." if len(shown) > 6 else "")
        raise NumberProblem(
            "ambiguous",
            f"the answer contains {len(numbers)} numbers ({listed}): give exactly one",
            shown,
        )
    if numbers[0].problem is not None:
        raise NumberProblem("unreadable", f"{numbers[0].problem}: write one exact number in digits")
    return numbers[0]


def exact(value: int | float) -> Fraction:
    """The value an author meant: ``0.1`` is one tenth (its shortest repr), not the binary float."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))
