"""Proof checkers as batch judges (Agda, Coq, Lean), hole filling, and the interaction lane.

A judgment is one batch process over one whole file set, in the sandbox; its verdict carries the
exact commands, binary, version, working directory, flags and checked bytes, so a client can
re-run the claim. The interaction lane answers questions (goal types, inferred types) and never
decides anything.
"""

from assay._errors import ToolchainMissing
from assay.proofs._cache import JudgmentCache, cache_key
from assay.proofs._fill import fill_hole
from assay.proofs._holes import HoleNotFound, HoleResult
from assay.proofs._judges import Judgment, judge, plan_for
from assay.proofs._lane import AgdaLane, Goal, LaneError
from assay.proofs._verdict import Verdict

__all__ = [
    "AgdaLane",
    "Goal",
    "HoleNotFound",
    "HoleResult",
    "JudgmentCache",
    "Judgment",
    "LaneError",
    "ToolchainMissing",
    "Verdict",
    "cache_key",
    "fill_hole",
    "judge",
    "plan_for",
]
