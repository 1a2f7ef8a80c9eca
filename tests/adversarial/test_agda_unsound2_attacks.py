"""Attacks on ``_agda_unsound`` after adv-unsound's fixes (adv-unsound2, session 9).

Both findings are fixed (the lead rewrote ``_applied`` rather than patch the column reading: at
the top level only ``open``/``import`` with directives and the next code at column 0, inside a
block only ``open M`` ending its line and the block); their tests now pass. The report:

The rule refuses an ``open``/``import`` whose module name is followed by an argument, and takes
``as`` (with ``using``, ``hiding``, …) to end an unapplied one. But ``as`` is not an Agda keyword:
a solution may define a function named ``as``, and Agda reads it as an ordinary argument after
``open M`` (``open S as id comp`` applies ``S`` to ``as``, ``id`` and ``comp``), and after
``import M``/``open import M`` too unless it is the second-to-last word (Agda's parser takes the
as-clause only from the last two words: ``import M as id comp as N`` applies ``M`` to ``as id
comp``). So in a ``where`` block the applied agda-stdlib module copies its data type and
agda/agda#8696 gets ``1 + 1 ≡ 3`` verified on both Agdas (critical, all three spellings).

Fix: ``as`` ends an unapplied declaration only after an ``import``'s module name, and only when
the name after it is itself followed by an end (a word of ``_MODULE_ENDS`` other than ``as`` on
the same line, a later line no further right than the block's floor, or the end of the file);
after a plain ``open``, ``as`` is an argument.

Second finding (critical): ``_block_floor`` stops at the last line that starts at column 0 and
leaves it out, but a ``where``/``let`` block can open on that very line (``f x = e where y =
tt``): every later line it counts starts right of the block's column. ``f true X = … where y =
tt``, then ``; open S`` on a line indented 4 past ``y`` and the arguments on a line indented 2
past it: the scan's floor is the ``;`` line's column, Agda continues ``open S`` (the same with
``let y = tt`` at the end of the clause's line). Verified on both Agdas.

Fix: on the column-0 line the loop stops at, also count the column of each token that follows a
layout keyword on that line (a block that opens there starts at that token), e.g. record in
``_line_heads`` the least column of a token right after a ``_LAYOUT`` word on the same line,
and fold it into the floor before ``break``.

Attacks that failed (Agda and the scan agree): a CR, FF, NEL or U+2028 between the name and its
arguments (Agda converts them all to line breaks, as the scan does); a vertical tab (not a line
break for either); an ``OPTIONS`` pragma as a ``where`` block's first token, so that the block's
column is left of every line the scan sees (the layout parses, but Agda refuses an ``OPTIONS``
pragma after the module header, and the scan refuses every other pragma); arguments after
``using (…)`` or ``public`` (parse errors).
"""

from __future__ import annotations

import pytest

from assay.proofs._agda_scan import agda_refusals
from assay.sandbox import Sandbox
from tests.adversarial.test_agda_mutual_attacks import _green
from tests.adversarial.test_agda_unsound_attacks import _COPY, _TOP, DEBIAN, HEADER, PYPI

_LIBRARY = "Relation.Binary.Reasoning.Base.Single"
_AS = "as : Set → Set → Set\nas = _⇒_\n\nf : Bool"
"""A function named ``as`` (the relation the copied module is applied to)."""
AS_ARGUMENT = {
    "open": "f true X = ⊤ IsRelatedTo X\n  where\n  open S as id comp",
    "open-import": f"f true X = ⊤ IsRelatedTo X\n  where\n  open import {_LIBRARY} as id comp",
    "import-as": f"f true X = N._IsRelatedTo_ ⊤ X\n  where\n  import {_LIBRARY} as id comp as N",
}
_WHERE = "f true X = ⊤ IsRelatedTo X where y = tt"
_AT = _WHERE.index("y =")
BLOCK_ON_THE_COLUMN_0_LINE = {
    "where": f"{_WHERE}\n{' ' * (_AT + 4)}; open S\n{' ' * (_AT + 2)}_⇒_ id comp",
    "let": (
        "f true X = let y = tt\n                   ; open S\n                 _⇒_ id comp"
        " in ⊤ IsRelatedTo X"
    ),
}
"""The block opens on the clause's own line (column 0), which ``_block_floor`` skips, so every
line it counts starts right of the block's column and an argument between the two is missed."""
ATTACKS = {
    f"as-argument:{k}": _TOP + _COPY.replace("BLOCK", v).replace("f : Bool", _AS, 1)
    for k, v in AS_ARGUMENT.items()
} | {
    f"block-on-the-column-0-line:{k}": _TOP + _COPY.replace("BLOCK", v)
    for k, v in BLOCK_ON_THE_COLUMN_0_LINE.items()
}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_scan_refuses_the_attack(attack: str) -> None:
    assert agda_refusals(ATTACKS[attack], header=HEADER)


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, DEBIAN], ids=["pypi", "debian"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_is_not_verified(attack: str, config: object, sandbox: Sandbox) -> None:
    assert not _green(ATTACKS[attack], config, sandbox)  # type: ignore[arg-type]


# --- attacks that failed -------------------------------------------------------------------

REFUSED_BY_AGDA = {
    "arguments-after-using": (
        "f true X = ⊤ IsRelatedTo X\n  where\n  open S using (_IsRelatedTo_) _⇒_ id comp"
    ),
    "arguments-after-public": "f true X = ⊤ IsRelatedTo X\n  where\n  open S public _⇒_ id comp",
    "carriage-return": "f true X = ⊤ IsRelatedTo X\n  where\n  open S\r_⇒_ id comp",
    "vertical-tab": "f true X = ⊤ IsRelatedTo X\n      where\v y = tt ; open S\n    _⇒_ id comp",
    "options-pragma-first-in-where": (
        "f true X = ⊤ IsRelatedTo X\n      where\n {-# OPTIONS #-}\n      ; y = tt ; open S\n"
        "    _⇒_ id comp"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_AGDA))
def test_agda_refuses_these_spellings(attempt: str, sandbox: Sandbox) -> None:
    """Agda does not read them as an application of ``S`` (the scan, since the lead's rewrite
    of ``_applied``, refuses some of them too: either way, never green)."""
    source = _TOP + _COPY.replace("BLOCK", REFUSED_BY_AGDA[attempt])
    assert not _green(source, PYPI, sandbox, scan=False)
    assert not _green(source, PYPI, sandbox)


REFUSED_BY_THE_SCAN = {
    "form-feed-then-deeper": "f true X = ⊤ IsRelatedTo X\n  where\n  open S\f    _⇒_ id comp",
    "next-line-separator": "f true X = ⊤ IsRelatedTo X\n  where\n  open S\x85   _⇒_ id comp",
    "open-import-then-a-deeper-line": (
        f"f true X = ⊤ IsRelatedTo X\n  where\n  open import {_LIBRARY}\n    _⇒_ id comp"
    ),
}


@pytest.mark.parametrize("attempt", sorted(REFUSED_BY_THE_SCAN))
def test_the_scan_refuses_these_spellings(attempt: str) -> None:
    shapes = agda_refusals(_TOP + _COPY.replace("BLOCK", REFUSED_BY_THE_SCAN[attempt]), HEADER)
    assert any("agda/agda#8696" in shape for shape in shapes), shapes
