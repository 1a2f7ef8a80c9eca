"""Attacks on ``_agda_unsound`` after the lead's rewrite of ``_applied`` (adv-unsound3, session 9).
Fixed by the lead with the stricter rule it suggested: a solution's only ``module`` is its own
header, ``module Name where``; the tests below pass.

Finding (critical, both Agdas): the ``module`` rule decides between a declaration and an
application by the first ``=`` or ``where`` after ``module``, wherever it stands. A ``where``
inside the module's telescope (an extended lambda, ``λ where``, in a parameter's type) comes
first, so ``module N (u : app (λ where tt → ⊤)) = S _⇒_ id comp`` is read as ``module N … where``
and passes, though Agda reads an application of agda-stdlib's
``Relation.Binary.Reasoning.Base.Single`` inside a ``where`` block: agda/agda#8696 copies its data
type and ``1 + 1 ≡ 3`` is verified on PyPI's 2.6.4.3 and Debian's 2.6.2.2 (the scan finds
nothing).

Fix: the deciding ``=``/``where`` is the first one at bracket depth 0 (outside ``(…)``, ``{…}``,
``{{…}}``/``⦃…⦄``: a telescope's typed binders are all bracketed); refuse when that token is
``=`` or there is none. Simpler and stricter alternative: refuse a ``module`` whose tokens before
its ``where`` include ``λ`` or a second ``where``.

Attacks that failed are listed in /work/notes/adv-unsound3.md (no time to encode them all).
"""

from __future__ import annotations

import pytest

from assay.proofs._agda_scan import agda_refusals
from assay.sandbox import Sandbox
from tests.adversarial.test_agda_unsound_attacks import _COPY, _TOP, DEBIAN, HEADER, PYPI, _green

_APP = "  app : (⊤ → Set) → Set\n  app g = g tt\n"
"""A function that gives a ``λ where`` a type, so the parameter's type checks."""
WHERE_IN_THE_TELESCOPE = {
    "explicit": (
        "f true X = N._IsRelatedTo_ tt ⊤ X\n  where\n"
        + _APP
        + "  module N (u : app (λ where tt → ⊤)) = S _⇒_ id comp"
    ),
    "implicit-then-open": (
        "f true X = N._IsRelatedTo_ ⊤ X\n  where\n"
        + _APP
        + "  module N {u : app (λ where tt → ⊤)}\n    = S _⇒_ id comp\n  open N"
    ),
}
ATTACKS = {
    f"where-in-the-telescope:{k}": _TOP + _COPY.replace("BLOCK", v)
    for k, v in WHERE_IN_THE_TELESCOPE.items()
}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_scan_refuses_the_attack(attack: str) -> None:
    shapes = agda_refusals(ATTACKS[attack], header=HEADER)
    assert any("agda/agda#8696" in shape for shape in shapes), shapes


@pytest.mark.slow
@pytest.mark.parametrize("config", [PYPI, DEBIAN], ids=["pypi", "debian"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_is_not_verified(attack: str, config: object, sandbox: Sandbox) -> None:
    assert not _green(ATTACKS[attack], config, sandbox)  # type: ignore[arg-type]


def test_a_nested_module_is_refused_by_design() -> None:
    """The lead's fix is the stricter one suggested: a solution's only ``module`` is its own
    header ``module Name where``, so a nested ``module M (x : T) where`` is refused too (a false
    reject: its definitions can stand at the top level)."""
    source = (
        f"module Solution where\n\n{HEADER}\n\nmodule M (n : Nat) where\n  m : Nat\n  m = n\n\n"
        "wrong : 1 + 1 ≡ 2\nwrong = refl\n"
    )
    assert any("#8696" in shape for shape in agda_refusals(source, header=HEADER))
    plain = f"module Solution where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 2\nwrong = refl\n"
    assert agda_refusals(plain, header=HEADER) == []
