"""Reading one batch judgment: it checks, it does not, a limit stopped it, or the toolchain broke.

Only what the parent observes decides a limit outright (``RunResult.limit``: its clock, the
cgroup's OOM kills, the CPU time it measured, the output it counted). Text a toolchain prints ("Out of memory", "Stack overflow") is also text the candidate can print, so it
only *suggests* a limit (``Reading.suggested``): the judge then re-runs with larger limits, and a
limit is believed only when the larger run checks (see ``_judges``). The assumption audit reads
outputs no solution code runs in: for Coq, coqchk's summary and a ``Print Assumptions`` step.

Two things are findings about the work whatever step they happen in: an output flood (checking a
proof never needs megabytes of output, and every byte is printed because of the candidate's
files: its own printing, or a checker listing what it declared), and a file assay wrote that
changed before a trusted step read it (only the solution's compilation ran in between).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.proofs._batch import Batch
from assay.proofs._plan import Plan
from assay.proofs._registry import Language, proof_language
from assay.proofs._verdict import Finding
from assay.sandbox import FLOOD_FACTOR, Limits, RunResult

LIMIT_SIGNS = {
    "memory": (
        "out of memory",
        "not enough memory",
        "heap exhausted",
        "cannot allocate memory",
        "malloc: failed on request",  # GHC's runtime out of address space (no cgroup: RLIMIT_AS)
        "resource limit for virtual memory",  # GHC's runtime cannot reserve its heap (RLIMIT_AS)
    ),
    "stack": ("stack overflow", "stack space overflow"),
}
"""Lower-cased words a toolchain prints when it runs out (Coq/OCaml, Agda/GHC, Lean)."""


@dataclass(frozen=True)
class Reading:
    """What one batch says: its finding, green or not, and what the judge must still settle."""

    finding: Finding
    green: bool
    batch: Batch
    assumptions: list[str] = field(default_factory=list)
    limit: str | None = None
    """A limit the parent observed, or (with ``suggested``) one only the output suggests."""
    suggested: bool = False
    """``limit`` comes from text or a report only: it must be confirmed before it counts."""
    broke: bool = False
    """The toolchain ended in neither of its two answers: maybe a crash the candidate provoked."""
    reason: str = ""
    rerun: bool = False
    """Read from the confirming re-run at larger limits (never cached under the task's key)."""

    @property
    def last(self) -> RunResult:
        """The last step that ran (the one that decided)."""
        return self.batch.runs[-1]


def read_batch(
    language: Language, plan: Plan, batch: Batch, allowed_axioms: Sequence[str], limits: Limits
) -> Reading:
    """What one batch says (see the module's docstring); the language reads its own exits."""
    reader = proof_language(language)
    runs = batch.runs
    last = runs[-1]
    changed = reader.tampering(runs)
    if changed is not None:
        why = f"the solution's compilation modified a trusted file ({changed})"
        return Reading("misbehaved", False, batch, reason=why)
    if len(runs) == len(plan.steps) and last.exit_code == 0:
        green, assumptions = reader.audit(plan, runs, allowed_axioms)
        return Reading("checks", green, batch, assumptions)
    if last.limit == "output":
        mib = limits.output_kb * FLOOD_FACTOR / 1024
        if len(runs) - 1 == reader.statement_step:
            why = f"the trusted statement (with the header) printed more than {mib:g} MiB"
            return Reading("machinery", False, batch, reason=why)  # the author's, not the work's
        why = (
            f"the toolchain's output exceeded {mib:g} MiB in step {len(runs)} "
            f"({step_name(plan.steps[len(runs) - 1])}): a proof check never needs that"
        )
        return Reading("misbehaved", False, batch, reason=why)
    if last.limit is not None:  # the sandbox reports only limits the parent itself observed
        why = f"step {len(runs)} was stopped by the {last.limit} limit (observed by assay)"
        return Reading("machinery", False, batch, limit=last.limit, reason=why)
    suggested = limit_sign(last)
    if suggested is not None:
        why = (
            f"step {len(runs)} ended with exit {last.exit_code} and a sign of the {suggested} limit"
        )
        return Reading("machinery", False, batch, limit=suggested, suggested=True, reason=why)
    failure = reader.trusted_failure(runs)
    if failure is not None:
        return Reading("machinery", False, batch, reason=failure)
    if reader.does_not_check(last.exit_code):
        return Reading("does_not_check", False, batch)
    ended = f"signal {last.signal}" if last.exit_code is None else f"exit code {last.exit_code}"
    why = f"step {len(runs)} ({step_name(plan.steps[len(runs) - 1])}) ended with {ended}"
    return Reading("machinery", False, batch, broke=True, reason=why)


def step_name(step: Sequence[str]) -> str:
    """The program a step runs, for details: in a ``sh -c`` step, the toolchain it executes."""
    if list(step[:2]) == ["sh", "-c"] and len(step) > 2:
        found = re.findall(r"^exec (\S+)", step[2], re.MULTILINE)
        program = found[-1] if found and not found[-1].endswith("sha256sum") else step[2].split()[0]
        return program.strip("'\"")
    return step[0] if step else "?"


def limit_sign(run: RunResult) -> str | None:
    """The limit a failed run's report or last words point at, if any (never proof of it)."""
    if run.exit_code == 0:
        return None
    tail = "\n".join([line for line in run.output.splitlines() if line.strip()][-8:]).lower()
    for limit, signs in LIMIT_SIGNS.items():
        if any(sign in tail for sign in signs):
            return limit
    return None
