"""A judgment's verdict: everything a client needs to re-run the claim instead of trusting it."""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import Field, computed_field

from assay._wire import WireModel
from assay.proofs._registry import Language

Finding = Literal["checks", "does_not_check", "crashed", "misbehaved", "machinery"]
"""What the run says: the file checks, it does not, the toolchain broke on the candidate's files
(a known-good proof still checks on it), the candidate's files made the judgment do what checking
a proof never needs (flood the output, change a file assay wrote), or the toolchain/harness
failed or a limit stopped it."""


class Verdict(WireModel):
    """One batch judgment of one whole file set. ``finding`` is derived from the exit code only,
    then an assumption audit (Coq, Lean) may still withhold green; nothing turns red into green."""

    schema_: Literal["assay.verdict/1"] = Field("assay.verdict/1", alias="schema")
    language: Language
    finding: Finding
    green: bool
    """The file checks *and* every extra condition holds (no disallowed assumptions)."""
    exit_code: int | None
    steps: list[list[str]]
    """The equivalent commands, run in order in ``cwd`` over ``files``; re-run them to check."""
    binary: str
    version: str
    cwd: str
    flags: list[str]
    files: dict[str, str]
    """Every checked file (relative to ``cwd``) and its sha256: the exact bytes judged."""
    sources: dict[str, str] = Field(default_factory=dict)
    """The checked files' text (always the wrapper assay wrote; all of them up to 64 KiB), so
    the claim can be re-run from the verdict alone."""
    checked_from_source: bool
    """No interface of the candidate existed before the run: its own source was checked."""
    elapsed_ms: int
    diagnostics: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    """Axioms the proof depends on (Coq ``Print Assumptions``, Lean ``#print axioms``)."""
    meaning: str
    """One sentence: what green means for this checker."""
    cached: bool = False
    isolation: str = "bwrap"
    limit: str | None = None
    """A limit that stopped the judgment (observed by the parent, or confirmed by a re-run with
    larger limits that checked); never a finding about the work."""
    reason: str = ""
    """Why the judgment ended as it did, when the exit alone does not say (crash, limit)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def command(self) -> str:
        """The steps as one shell command line (``&&`` between them), to paste and re-run."""
        return " && ".join(shlex.join(step) for step in self.steps)
