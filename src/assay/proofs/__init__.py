"""Proof checkers as batch judges (Agda, Coq, Lean), hole filling, and the interaction lane.

A judgment is one batch process over one whole file set, in the sandbox; its verdict carries the
exact commands, binary, version, working directory, flags and checked bytes, so a client can
re-run the claim. Each language is one module behind ``ProofLanguage``, registered once
(``LANGUAGES``; ``Language`` names them). ``judge_source`` and ``judge_hole`` are the one path
from a file or a hole candidate to an ``Attempt`` (``fill_hole`` and the kinds both use it). The
interaction lane answers questions (goal types, inferred types, objections to a term) and never
decides anything. ``agda_tokens`` is Agda's lexer, the one every reading of Agda text here uses,
exported so that a layer above (``assay.prove``'s reader) reads the same bytes the same way.
"""

from assay._errors import ToolchainMissing
from assay.proofs._agda_lex import LINE_END as AGDA_LINE_END
from assay.proofs._agda_lex import Token as AgdaToken
from assay.proofs._agda_lex import tokens as agda_tokens
from assay.proofs._agda_toolchain import agda_toolchain, agda_toolchain_for
from assay.proofs._cache import JudgmentCache, cache_for, cache_key
from assay.proofs._fill import (
    Attempt,
    HoleResult,
    Judging,
    Terms,
    fill_hole,
    judge_hole,
    judge_source,
)
from assay.proofs._holes import HoleNotFound, HoleStatus, fill, only_hole
from assay.proofs._judges import DEFAULT_LIMITS, Judgment, judge, plan_for, refusals_for
from assay.proofs._lane import AgdaLane, Goal, LaneError, LaneInputError, TermRejected
from assay.proofs._language import ProofLanguage
from assay.proofs._plan import Plan
from assay.proofs._registry import LANGUAGES, Language, proof_language
from assay.proofs._toolchain import Toolchain
from assay.proofs._verdict import Verdict

__all__ = [
    "AGDA_LINE_END",
    "AgdaLane",
    "AgdaToken",
    "Attempt",
    "DEFAULT_LIMITS",
    "Goal",
    "HoleNotFound",
    "HoleResult",
    "HoleStatus",
    "Judging",
    "Judgment",
    "JudgmentCache",
    "LANGUAGES",
    "LaneError",
    "LaneInputError",
    "Language",
    "Plan",
    "ProofLanguage",
    "TermRejected",
    "Terms",
    "Toolchain",
    "ToolchainMissing",
    "Verdict",
    "agda_tokens",
    "agda_toolchain",
    "agda_toolchain_for",
    "cache_for",
    "cache_key",
    "fill",
    "fill_hole",
    "judge",
    "judge_hole",
    "judge_source",
    "only_hole",
    "plan_for",
    "proof_language",
    "refusals_for",
]
