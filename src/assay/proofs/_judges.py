"""``judge``: refuse the cheating shapes, then one batch judgment (or a cached verdict)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay._errors import ToolchainMissing
from assay.proofs import _scan, _toolchain
from assay.proofs._cache import JudgmentCache, cache_key
from assay.proofs._judge import WORKDIR, run_batch
from assay.proofs._languages import (
    LEAN_STANDARD_AXIOMS,
    WRAPPER,
    Plan,
    agda_plan,
    coq_assumptions,
    coq_plan,
    lean_assumptions,
    lean_plan,
)
from assay.proofs._verdict import Finding, Verdict
from assay.sandbox import Limits, Sandbox

Language = Literal["agda", "coq", "lean"]
AGDA_DOES_NOT_CHECK = 42


@dataclass(frozen=True)
class Judgment:
    """A refusal (the shapes found, nothing was run) or a verdict."""

    plan: Plan
    verdict: Verdict | None
    refusals: list[str]


def toolchain_for(language: Language) -> _toolchain.Toolchain:
    found = {"agda": _toolchain.agda, "coq": _toolchain.coq, "lean": _toolchain.lean}[language]()
    if found is None:
        binary = {"agda": "agda", "coq": "coqc", "lean": "lake"}[language]
        raise ToolchainMissing(
            f"{binary} is not installed on this machine, so {language} proofs cannot be judged here"
        )
    return found


def refusals_for(language: Language, source: str, options: Sequence[str] = ()) -> list[str]:
    """The refused shapes in ``source``: found without any toolchain, before any judgment."""
    if language == "agda":
        return _scan.agda_refusals(source, options)
    return _scan.coq_refusals(source) if language == "coq" else _scan.lean_refusals(source)


def plan_for(
    language: Language,
    solution: str,
    *,
    statement: str | None = None,
    name: str | None = None,
    header: str = "",
    options: Sequence[str] = (),
    stdlib: bool = True,
) -> Plan:
    toolchain = toolchain_for(language)
    if language == "agda":
        return agda_plan(
            toolchain,
            solution,
            statement=statement,
            name=name,
            header=header,
            options=options,
            stdlib=stdlib,
        )
    if statement is None or name is None:
        raise ValueError(f"{language} judgments need the trusted statement and the name to check")
    if language == "coq":
        return coq_plan(toolchain, solution, statement=statement, name=name, header=header)
    return lean_plan(toolchain, solution, statement=statement, name=name, header=header)


def judge(
    language: Language,
    plan: Plan,
    sandbox: Sandbox,
    limits: Limits,
    cache: JudgmentCache | None = None,
    allowed_axioms: Sequence[str] = (),
) -> Judgment:
    """Refuse the plan's shapes, else judge it (from the cache when the same bytes were judged)."""
    if plan.refusals:
        return Judgment(plan, None, plan.refusals)
    toolchain = toolchain_for(language)
    key = cache_key(
        plan.files,
        toolchain.version,
        plan.flags,
        toolchain.library,
        ",".join(sorted(allowed_axioms)),
    )
    if cache is not None and (hit := cache.get(key)) is not None:
        return Judgment(plan, hit, [])
    batch = run_batch(sandbox, plan.files, plan.steps, limits)
    last = batch.runs[-1]
    output = "\n".join(run.output for run in batch.runs)
    finding: Finding
    if last.limit is not None or last.exit_code is None:
        finding = "machinery"
    elif last.exit_code == 0 and len(batch.runs) == len(plan.steps):
        finding = "checks"
    elif language == "agda":
        finding = "does_not_check" if last.exit_code == AGDA_DOES_NOT_CHECK else "machinery"
    else:
        finding = "does_not_check" if last.exit_code == 1 else "machinery"
    assumptions: list[str] = []
    green = finding == "checks"
    if green and language in ("coq", "lean"):
        read = coq_assumptions(last.output) if language == "coq" else lean_assumptions(last.output)
        allowed = set(allowed_axioms) | (set(LEAN_STANDARD_AXIOMS) if language == "lean" else set())
        if read is None:
            assumptions, green = ["the assumption audit printed nothing readable"], False
        else:
            assumptions = read
            green = all(axiom in allowed for axiom in read)
    verdict = Verdict(
        language=language,
        finding=finding,
        green=green,
        exit_code=last.exit_code,
        steps=[list(step) for step in plan.steps],
        binary=toolchain.binary,
        version=toolchain.version,
        cwd=WORKDIR,
        flags=plan.flags,
        files=batch.files,
        sources=_sources(plan),
        checked_from_source=batch.checked_from_source,
        elapsed_ms=batch.elapsed_ms,
        diagnostics=_diagnostics(output),
        assumptions=assumptions,
        meaning=plan.meaning,
        isolation=last.isolation,
        limit=last.limit,
    )
    if cache is not None:
        cache.put(key, verdict)
    return Judgment(plan, verdict, [])


SOURCES_LIMIT = 64 * 1024


def _sources(plan: Plan) -> dict[str, str]:
    small = sum(len(data) for data in plan.files.values()) <= SOURCES_LIMIT
    return {
        name: data.decode("utf-8", errors="replace")
        for name, data in plan.files.items()
        if small or name.startswith(WRAPPER)
    }


def _diagnostics(output: str) -> list[str]:
    lines = [line.rstrip() for line in output.splitlines()]
    kept = [line for line in lines if line.strip() and not line.lstrip().startswith("Checking ")]
    return kept[:60]
