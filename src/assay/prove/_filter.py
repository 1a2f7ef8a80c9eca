"""The fast-lane filter: a candidate is cut only when Agda itself objects to it at the hole.

Before a candidate costs a judgment (a batch check of the whole file: seconds), the warm
interaction lane checks it against the hole's goal (``AgdaLane.objection``: milliseconds). The
filter cuts it only when Agda raises an error located in the term (a parse, scope or type error
of the expression) **and** the goal's type and context hold no unknown (``checkable``). Why the
judge can then never accept it (so proofs are byte-identical with and without the filter):

- the same Agda on the same problem: the lane and the judge run the toolchain and library of the
  same ``Config``, and the file's own OPTIONS apply to both (the judge adds ``--safe``, which
  refuses more, never less). The judge checks the file with the term in the hole, parenthesised
  (a candidate the scan admits is one closed group of brackets, so ``(t)`` parses as ``t``), in
  the hole's scope and context against the hole's type: what the lane's check does;
- nothing left to learn: with no meta in the goal or the context, the types compared are the
  ones the judge compares. A meta there could still be solved, or solved differently, while the
  judge checks the clause; then the filter keeps every candidate;
- an error is final: Agda postpones what it cannot decide yet (unsolved metas, instance search
  with several candidates, stuck constraints) and raises only what no later solution can undo.
  Termination, coverage and unsolved metas are the judge's alone and never an objection: the
  lane can only be more lenient than the judge, and leniency costs a judgment, never a proof.

It keeps everything else: no objection (the term checks, or Agda failed in a way that says
nothing against it: ``AgdaLane.objection``), a goal with unknowns, a candidate the scan refuses
(the judge refuses it without a judgment) and one holding a hole. It replaces a comparison of
printed types, which cut an acceptable candidate whenever the printed types differ only in a
binder's name (``(n : ℕ) → n + 0 ≡ n`` inferred for the goal ``(m : ℕ) → m + 0 ≡ m``), and
which could not cut a candidate whose inferred type holds a meta (``refl``: ``_x ≡ _x``), the
most frequent wasted judgment.
"""

from __future__ import annotations

import re

from assay.proofs import Goal, proof_language

_META = re.compile(r"_(\S*_)?\d+|\?\d*")
"""How Agda prints an unknown: a meta (``_12``, ``_x_12``) or an interaction point (``?0``)."""
_WORD_BREAKS = str.maketrans(dict.fromkeys("(){}⦃⦄", " "))


def has_unknowns(printed: str) -> bool:
    """Whether a type as Agda prints it mentions a meta or an interaction point. A binder or
    pattern ``_`` (``foldr (λ _ → suc) 0 xs``) and an operator's name (``_+_``) are not one."""
    return any(_META.fullmatch(word) for word in printed.translate(_WORD_BREAKS).split())


def checkable(goal: Goal) -> bool:
    """Whether the lane's objection at this goal is the judge's too: neither the goal's type
    nor any type in its context holds an unknown (see the module's docstring)."""
    return not has_unknowns(goal.type) and not any(has_unknowns(e.type) for e in goal.context)


def askable(term: str) -> bool:
    """Whether the lane may be asked about ``term`` for the filter: the judge would judge it
    (the scan refuses none of it) and it holds no hole (the judge reads one as progress; the
    lane would make it an interaction point of its own)."""
    agda = proof_language("agda")
    if agda.candidate_refusals(term) or agda.holes(term):
        return False
    return "?" not in term.translate(_WORD_BREAKS).split()
