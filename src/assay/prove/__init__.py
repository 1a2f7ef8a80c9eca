"""The proof search loop: a fixed proposer, judgments per hole, solves that need the evidence.

An instrument for measuring how trustworthy a checker-driven loop is, not a prover to be tuned:
the proposer (``_moves``) is fixed and non-learned, so every number is about the loop and the
judge. Agda is the only judge (``assay.proofs.judge_hole``: a whole-file batch check per
candidate); the interaction lane only answers questions (goal, context, inferred types, Agda's
objection to a term at the hole) and may cut candidates, which changes the cost, never the
verdict. A solve is claimed only through ``Proved`` (``_solve``), whose one constructor demands
an empty obligation set and a green final batch check of the whole file. Every run writes a
ledger (``_ledger``) that is byte-for-byte reproducible, timings aside.
"""

from assay.prove._folder import Entry, Manifest, load, prove_folder, read_manifest, recall
from assay.prove._ledger import Controls, ObligationLedger, ProveReport, Tried
from assay.prove._moves import CLOSERS, VOCABULARY, Lemma, Move, explicit_arity, propose, shapes
from assay.prove._retrieval import Ranked, Row, rank, retrieve
from assay.prove._search import Meta, Settings, prove_text
from assay.prove._solve import Proved, Step, replay

__all__ = [
    "CLOSERS",
    "Controls",
    "Entry",
    "Lemma",
    "Manifest",
    "Meta",
    "Move",
    "ObligationLedger",
    "Proved",
    "ProveReport",
    "Ranked",
    "Row",
    "Settings",
    "Step",
    "Tried",
    "VOCABULARY",
    "explicit_arity",
    "load",
    "propose",
    "prove_folder",
    "prove_text",
    "rank",
    "read_manifest",
    "recall",
    "replay",
    "retrieve",
    "shapes",
]
