"""The lone-number fast path of ``find_numbers`` reads exactly what the full scan reads.

``find_numbers`` answers the commonest answer (one number, nothing but spaces around it) without
the scans for words, symbols and units. These properties compare it with the full scan on
generated answers, adversarial shapes included: the same numbers, or the same refusal.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assay.checks._numbers import Number, NumberProblem, _lone_number, _scan, find_numbers

# Characters that matter to the fast path's decision and to the full scan around it: every ASCII
# space (``\x1c`` to ``\x1f`` are spaces to Python), signs, the pieces of a number, the letters of
# prefixed literals, magnitudes, units, words and non-finite values, and a few non-ASCII ones.
_ASCII = list(" \t\n\r\x0b\x0c\x1c\x1f+-0123456789.,eE/xXbBoOkKMmnNaiIf%_$^*()[]{}=:<>'\"\\")
_OTHER = ["\u00a0", "\u2212", "\u00b2", "\u00bd", "\u0663", "\u034f", "\u221e", "\u00b1"]
_SPACE = st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x1f", max_size=3)
_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=6)
_NUMBERISH = st.builds(
    lambda whole, sep, frac, exp, den: whole + sep + frac + exp + den,
    _DIGITS,
    st.sampled_from(["", ".", ",", ",,", "."]),
    st.sampled_from(["", "5", "000", "123", "1,234"]),
    st.sampled_from(["", "e3", "E-2", "e+400", "e", "e99999999", "E"]),
    st.sampled_from(["", "/2", "/0", "/0.5", "/", "/1,000"]),
)
_LONE_SHAPED = st.builds(
    lambda lead, sign, number, tail: lead + sign + number + tail,
    _SPACE,
    st.sampled_from(["", "-", "+", "--", "+-", ".", "-."]),
    _NUMBERISH,
    st.one_of(_SPACE, st.sampled_from(["", ".", " m", "k", " million", "x1", "+", " nan"])),
)
_ANY = st.text(alphabet=st.sampled_from(_ASCII + _OTHER), max_size=14)


def _outcome(read: Callable[..., list[Number] | None], *args: object) -> object:
    """What a reading gives: its numbers, or the refusal it raised (reason and message)."""
    try:
        return read(*args)
    except NumberProblem as exc:
        return ("refused", exc.reason, str(exc))


@settings(max_examples=1500, deadline=None)
@given(st.one_of(_LONE_SHAPED, _ANY))
@example(" -3.5\n")
@example("\x1c42\x1f")
@example(".5")
@example("-.5 ")
@example("0x1F")
@example("1,0000")
@example("0e99999999")
@example("1" * 401)
def test_the_fast_path_reads_what_the_full_scan_reads(text: str) -> None:
    lone = _outcome(_lone_number, text)
    if lone is None or not text.isascii():
        return  # not the fast path's shape: find_numbers takes the full scan
    for magnitude_letters in (True, False):
        assert lone == _outcome(_scan, text, magnitude_letters), text


@settings(max_examples=1500, deadline=None)
@given(st.one_of(_LONE_SHAPED, _ANY))
def test_find_numbers_is_the_full_scan(text: str) -> None:
    for magnitude_letters in (True, False):
        fast = _outcome(find_numbers, text, magnitude_letters)
        assert fast == _outcome(_scan, text, magnitude_letters), text


@pytest.mark.parametrize(
    "text", ["42", " -3.5\n", "+1,000", ".5", "1e3", "3/4", "\t7\x0b", "0", "-0.0e-5"]
)
def test_lone_numbers_take_the_fast_path(text: str) -> None:
    assert _lone_number(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "42 m",
        "42k",
        "- 42",
        "--42",
        "+-42",
        "0x2A",
        "42+",
        "42 nan",
        "1 2",
        "42.",
        "x 42",
        "",
        "   ",
        ".",
        "e5",
        "42\u00b2",
    ],
)
def test_anything_else_takes_the_full_scan(text: str) -> None:
    assert _lone_number(text) is None
