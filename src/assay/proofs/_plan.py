"""A plan: what one judgment checks and how (the files, the command steps, the flags).

Every language builds its plans (``_agda``, ``_coq``, ``_lean``); the judge runs and reads them
without knowing which language built them. The names below are the convention every language
follows for the files assay writes around a solution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.proofs._batch import Alone
from assay.proofs._paths import path_problem
from assay.proofs._toolchain import Toolchain

WRAPPER = "AssayGoal"
"""The wrapper module: it restates the trusted statement and checks the solution against it."""
STATEMENT = "AssayStatement"
"""The trusted statement compiled on its own (Coq, Lean)."""
AUDIT = "AssayAudit"
"""The assumption audit (Coq, Lean)."""
TRUSTED_STEMS = (STATEMENT, WRAPPER, AUDIT)
"""The files assay writes: always kept in a verdict's ``sources``, whatever their size."""
MARKER_PLACEHOLDER = "{marker}"
"""Replaced in the commands that run by the plan's fresh ``marker``."""


@dataclass(frozen=True)
class Plan:
    """What one judgment checks and how: the files, the command steps, the flags."""

    files: dict[str, bytes]
    steps: list[list[str]]
    flags: list[str]
    target: str
    meaning: str
    refusals: list[str] = field(default_factory=list)
    mounts: tuple[str, ...] = ()
    """Host paths the steps read, shown read-only at the same path (a toolchain outside /usr,
    a configuration file under /etc the toolchain needs: ``ProofLanguage.sandbox_paths``)."""
    marker: str = ""
    """Drawn fresh for each plan and put in place of ``{marker}`` only in the commands that run
    (``commands``): it is not in ``steps``, so not in the cache key, and no earlier step saw it."""
    expects: Any = None
    """What the language's reading of this plan's runs must find (Lean: the audit's marker and
    the header's imports, an ``AuditExpectation``); None when it needs nothing."""
    alone: Alone | None = None
    """The first step runs in a folder of its own, only its one output copied out (Lean: the
    solution's compilation runs its code; see ``_batch.Alone``)."""
    toolchain: Toolchain | None = None
    """The toolchain the steps run (the judge names it in the verdict and the cache key); None:
    the one ``Config`` selects (``_judges.plan_for`` always sets it)."""
    fallback: Plan | None = None
    """The same files under the toolchain's ``fallback``: judged instead, and its verdict
    stands, only when this plan's run fails on the toolchain's own library (the language's
    ``trusted_failure``), never after a finding about the work."""

    def commands(self) -> list[list[str]]:
        """The steps as they run: ``{marker}`` replaced by this plan's marker."""
        if not self.marker:
            return [list(step) for step in self.steps]
        return [
            [arg.replace(MARKER_PLACEHOLDER, self.marker) for arg in step] for step in self.steps
        ]

    def __post_init__(self) -> None:
        """A file name that is not a plain relative source name refuses the plan, whoever built it."""
        for name in self.files:
            problem = path_problem(name)
            if problem is not None and problem not in self.refusals:
                self.refusals.append(problem)


def indent(statement: str) -> str:
    """A statement's lines indented under the declaration that restates it."""
    return statement.strip().replace("\n", "\n    ")
