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
from typing import Literal

from assay.proofs._judge import Batch
from assay.proofs._languages import (
    COQ_DIGEST,
    COQ_STATEMENT,
    COQ_STEP_AUDIT,
    COQ_STEP_CHECKER,
    COQ_STEP_STATEMENT,
    COQ_STEP_TRUSTED,
    LEAN_STANDARD_AXIOMS,
    LEAN_STEP_STATEMENT,
    LEAN_TRUSTED_FAILED,
    TRUSTED_FILE_CHANGED,
    Plan,
    coq_assumptions,
    coqchk_summary,
)
from assay.proofs._lean_audit import REJECTED_EXIT, read_audit
from assay.proofs._verdict import Finding
from assay.sandbox import Limits, RunResult
from assay.sandbox._limits import FLOOD_FACTOR

Language = Literal["agda", "coq", "lean"]
DOES_NOT_CHECK = {"agda": 42, "coq": 1, "lean": 1}
"""The exit code with which each toolchain says "this does not check"."""
LIMIT_SIGNS = {
    "memory": ("out of memory", "not enough memory", "heap exhausted", "cannot allocate memory"),
    "stack": ("stack overflow", "stack space overflow"),
}
"""Lower-cased words a toolchain prints when it runs out (Coq/OCaml, Agda/GHC, Lean)."""


@dataclass(frozen=True)
class Reading:
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
        return self.batch.runs[-1]


TRUSTED_STATEMENT_STEP = {"coq": COQ_STEP_STATEMENT, "lean": LEAN_STEP_STATEMENT}
"""The step that compiles the author's statement and header and reads nothing of the solution."""


def read_batch(
    language: Language, plan: Plan, batch: Batch, allowed_axioms: Sequence[str], limits: Limits
) -> Reading:
    runs = batch.runs
    last = runs[-1]
    changed = tampering(language, runs)
    if changed is not None:
        why = f"the solution's compilation modified a trusted file ({changed})"
        return Reading("misbehaved", False, batch, reason=why)
    if len(runs) == len(plan.steps) and last.exit_code == 0:
        green, assumptions = audit(language, plan, runs, allowed_axioms)
        return Reading("checks", green, batch, assumptions)
    if last.limit == "output":
        mib = limits.output_kb * FLOOD_FACTOR / 1024
        if len(runs) - 1 == TRUSTED_STATEMENT_STEP.get(language):
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
    if language == "coq" and len(runs) - 1 == COQ_STEP_STATEMENT:
        why = "the trusted statement (with the header) does not compile on its own"
        return Reading("machinery", False, batch, reason=why)
    if language == "lean" and last.exit_code == LEAN_TRUSTED_FAILED:
        why = f"step {len(runs)}, a trusted step, failed (exit {LEAN_TRUSTED_FAILED})"
        return Reading("machinery", False, batch, reason=why)
    if last.exit_code == DOES_NOT_CHECK[language] or (
        language == "lean" and last.exit_code == REJECTED_EXIT
    ):
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


def tampering(language: Language, runs: Sequence[RunResult]) -> str | None:
    """Which file assay wrote changed before a trusted step read it, or None.

    Coq: each step after the solution's compilation checks the trusted sources in the sandbox
    (exit ``TRUSTED_FILE_CHANGED``) and prints the compiled statement's digest first, which
    must be the one step 1 printed right after compiling it."""
    if language != "coq" or len(runs) <= COQ_STEP_TRUSTED:
        return None
    if runs[-1].exit_code == TRUSTED_FILE_CHANGED:
        return f"a trusted source, found before step {len(runs)}"
    compiled = [line for line in runs[COQ_STEP_STATEMENT].output.splitlines() if line.strip()]
    expected = compiled[-1] if compiled else ""
    for index in range(COQ_STEP_TRUSTED, len(runs)):
        first = runs[index].output.split("\n", 1)[0]
        if not COQ_DIGEST.fullmatch(expected) or first != expected:
            return f"{COQ_STATEMENT}.vo, found before step {index + 1}"
    return None


def without_digest(output: str) -> str:
    """A trusted Coq step's output without the digest line it printed first."""
    first, _, rest = output.partition("\n")
    return rest if COQ_DIGEST.fullmatch(first) else output


def limit_sign(run: RunResult) -> str | None:
    """The limit a failed run's report or last words point at, if any (never proof of it)."""
    if run.exit_code == 0:
        return None
    tail = "\n".join([line for line in run.output.splitlines() if line.strip()][-8:]).lower()
    for limit, signs in LIMIT_SIGNS.items():
        if any(sign in tail for sign in signs):
            return limit
    return None


def audit(
    language: Language, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
) -> tuple[bool, list[str]]:
    """(green, assumptions) of a run that checked; anything unreadable withholds green."""
    if language == "agda":
        return True, []
    if language == "lean":
        return lean_audit(plan, runs, allowed_axioms)
    return coq_audit(plan, runs, allowed_axioms)


def lean_audit(
    plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
) -> tuple[bool, list[str]]:
    """The Lean audit step's report (``_lean_audit``), read exactly; the standard three allowed."""
    read = None if plan.lean_audit is None else read_audit(runs[-1].output, plan.lean_audit)
    if read is None:
        return False, ["the assumption audit printed nothing readable"]
    allowed = set(allowed_axioms) | set(LEAN_STANDARD_AXIOMS)
    green = not read.problems and all(axiom in allowed for axiom in read.axioms)
    return green, read.axioms + read.problems


def coq_audit(
    plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
) -> tuple[bool, list[str]]:
    """Green needs both channels clean: coqchk's summary of the environment it re-checked (no
    axiom of the solution, no unsafe fixpoint, assumed positivity or type-in-type) and the
    closure ``Print Assumptions`` lists (only allowed axioms)."""
    if len(runs) <= max(COQ_STEP_CHECKER, COQ_STEP_AUDIT):
        return False, ["the Coq audit steps did not run"]
    summary = coqchk_summary(without_digest(runs[COQ_STEP_CHECKER].output))
    read = coq_assumptions(without_digest(runs[COQ_STEP_AUDIT].output))
    problems: list[str] = []
    if summary is None:
        problems.append("coqchk's summary was not readable")
    else:
        untrusted = [n.removesuffix(".v") for n in plan.files if n != f"{COQ_STATEMENT}.v"]
        problems += summary.problems(allowed_axioms, untrusted)
    if read is None:
        problems.append("the assumption audit printed nothing readable")
        read = []
    assumptions = read + [problem for problem in problems if problem not in read]
    return not problems and all(axiom in allowed_axioms for axiom in read), assumptions
