"""``judge``: refuse the cheating shapes, then one batch judgment (or a cached verdict).

The batch is read by ``_reading`` (checks, does not check, a limit, or a broken toolchain).
Two things only the judge can settle, because they need more runs: a limit that only the
toolchain's text suggests is believed only when one re-run with larger limits checks (so text a
wrong proof prints never makes it inconclusive); and a toolchain that broke on the candidate's
files is the candidate's finding (``crashed``, refuted) when a known-good canary still checks on
the same toolchain and limits, else assay's ``error``. Neither a re-run nor a crash is cached.

The toolchain is the plan's (``Plan.toolchain``: under ``agda_toolchain="auto"`` the Agda chosen
for the plan's imports). When its run fails on its *own library* (the language's
``trusted_failure``: Agda could not load a library module) and the plan carries a ``fallback``,
the fallback plan (the same files under the other toolchain) is judged and its verdict stands,
naming its own binary, version and command. Only then: a finding about the work (a type error,
an open hole, a crash the canary pins on the candidate, a limit) is never judged a second time.
"""

from __future__ import annotations

import resource
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import ToolchainMissing
from assay.proofs._batch import WORKDIR, run_batch
from assay.proofs._cache import JudgmentCache, cache_key
from assay.proofs._canary import canary_checks
from assay.proofs._plan import TRUSTED_STEMS, WRAPPER, Plan
from assay.proofs._reading import Reading, read_batch
from assay.proofs._registry import Language, proof_language
from assay.proofs._toolchain import Toolchain
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox

DEFAULT_LIMITS = Limits(timeout=300, memory_mb=4096)
"""The limits of a judgment whose caller sets none (``hole fill``; the kinds' spec defaults)."""


@dataclass(frozen=True)
class Judgment:
    """A refusal (the shapes found, nothing was run) or a verdict."""

    plan: Plan
    verdict: Verdict | None
    refusals: list[str]


def toolchain_for(language: Language, config: Config = DEFAULT_CONFIG) -> Toolchain:
    """The language's toolchain on this machine for ``config``; ToolchainMissing when absent."""
    found = proof_language(language).toolchain(config)
    if found is None:
        binary = proof_language(language).install_hint
        raise ToolchainMissing(
            f"{binary} is not installed on this machine, so {language} proofs cannot be judged here"
        )
    return found


def refusals_for(
    language: Language,
    source: str,
    options: Sequence[str] = (),
    header: str = "",
    config: Config = DEFAULT_CONFIG,
    obligation: bool = False,
) -> list[str]:
    """The refused shapes in ``source``: found without any toolchain, before any judgment
    (``obligation``: the author's file a hole candidate fills)."""
    return proof_language(language).refusals(source, header, options, config, obligation)


def plan_for(
    language: Language,
    solution: str,
    *,
    statement: str | None = None,
    name: str | None = None,
    header: str = "",
    options: Sequence[str] = (),
    stdlib: bool = True,
    config: Config = DEFAULT_CONFIG,
) -> Plan:
    """The plan that judges ``solution`` in ``language`` (against the trusted ``statement`` and
    the solution's ``name`` when given; Coq and Lean need them): its files, steps and the shapes
    it refuses. ToolchainMissing when the language's toolchain is not installed."""
    toolchain = toolchain_for(language, config)
    plan = proof_language(language).plan(
        toolchain,
        solution,
        statement=statement,
        name=name,
        header=header,
        options=options,
        stdlib=stdlib,
    )
    return plan if plan.toolchain is not None else replace(plan, toolchain=toolchain)


def judge(
    language: Language,
    plan: Plan,
    sandbox: Sandbox,
    limits: Limits,
    cache: JudgmentCache | None = None,
    allowed_axioms: Sequence[str] = (),
    config: Config = DEFAULT_CONFIG,
) -> Judgment:
    """Refuse the plan's shapes, else judge it (from the cache when the same bytes were judged)
    with the plan's toolchain; its ``fallback`` judges instead only when that toolchain failed
    on its own library (see the module's docstring)."""
    if plan.refusals:
        return Judgment(plan, None, plan.refusals)
    toolchain = plan.toolchain or toolchain_for(language, config)
    if toolchain.launch and sandbox.memory_limit == "rlimit-as":
        # Without a cgroup the memory limit is RLIMIT_AS, and GHC's runtime with a large
        # nursery asks for more address space (9 GiB) than any judgment's limit: plain it is.
        plan, toolchain = untuned(plan, toolchain), replace(toolchain, launch=())
    key = _key(language, plan, toolchain, sandbox, limits, allowed_axioms)
    if cache is not None and (hit := cache.get(key)) is not None:
        return Judgment(plan, hit, [])
    reading = _judged(language, toolchain, plan, sandbox, limits, allowed_axioms)
    if reading.limit == "memory" and toolchain.launch:
        # The runtime options are assay's choice, not the work's: a memory limit the tuned
        # command hits (its larger nursery) is judged again with the plain command, which then
        # decides and is the command the verdict names.
        plan, toolchain = untuned(plan, toolchain), replace(toolchain, launch=())
        reading = _judged(language, toolchain, plan, sandbox, limits, allowed_axioms)
    if plan.fallback is not None and _library_failed(language, reading):
        instead = judge(
            language,
            replace(plan.fallback, fallback=None),
            sandbox,
            limits,
            cache,
            allowed_axioms,
            config,
        )
        if instead.verdict is not None:
            note = (
                f"{toolchain.version} could not load its library ({reading.reason}): "
                f"{instead.verdict.version} judged instead"
            )
            verdict = instead.verdict.model_copy(
                update={"reason": "; ".join(filter(None, [note, instead.verdict.reason]))}
            )
            # Not cached under this plan's key, which names only this toolchain: the fallback's
            # own judgment is cached under its own key (a repeat costs the failed first run).
            return Judgment(instead.plan, verdict, [])
    batch, last = reading.batch, reading.last
    verdict = Verdict(
        language=language,
        finding=reading.finding,
        green=reading.green,
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
        diagnostics=_diagnostics(language, "\n".join(run.output for run in batch.runs)),
        assumptions=reading.assumptions,
        meaning=plan.meaning,
        isolation=last.isolation,
        limit=reading.limit,
        reason=reading.reason,
    )
    if cache is not None and not reading.rerun:
        cache.put(key, verdict)  # the cache itself keeps only clean checks / does-not-check
    return Judgment(plan, verdict, [])


def _key(
    language: Language,
    plan: Plan,
    toolchain: Toolchain,
    sandbox: Sandbox,
    limits: Limits,
    allowed_axioms: Sequence[str],
) -> str:
    """The cache key of judging ``plan`` with ``toolchain`` (its identity, the exact steps)."""
    return cache_key(
        plan.files,
        language=language,
        binary=toolchain.binary,
        version=toolchain.version,
        library=toolchain.library,
        flags=list(plan.flags),
        steps=[list(step) for step in plan.steps],
        allowed_axioms=sorted(set(allowed_axioms)),
        limits=limits.model_dump(mode="json"),
        isolation=sandbox.isolation,
    )


def _library_failed(language: Language, reading: Reading) -> bool:
    """The run ended on the toolchain's own library (the language's ``trusted_failure``), with
    no limit, no crash and no finding: the only end after which the plan's fallback judges."""
    return (
        reading.finding == "machinery"
        and reading.limit is None
        and not reading.broke
        and not reading.suggested
        and proof_language(language).trusted_failure(reading.batch.runs) is not None
    )


RERUN_FACTOR = 4
RERUN_MEMORY_CEILING_MB = 8192
"""A re-run to confirm a memory limit never asks for more than this (or the task's own limit)."""
RERUN_STACK_BYTES = 1 << 30


def _judged(
    language: Language,
    toolchain: Toolchain,
    plan: Plan,
    sandbox: Sandbox,
    limits: Limits,
    allowed_axioms: Sequence[str],
) -> Reading:
    """Run the plan and read it; confirm a suggested limit by one larger run; consult the canary
    when the toolchain broke. A wrong proof can only end refuted (or, like any work, stopped by
    a limit the parent itself observed): text alone never makes a failure inconclusive."""
    first = read_batch(
        language,
        plan,
        run_batch(sandbox, plan.files, plan.commands(), limits, plan.mounts, plan.alone),
        allowed_axioms,
        limits,
    )
    reading, canary_limits = first, limits
    if first.suggested:
        larger = _raised(limits)
        again = read_batch(
            language,
            plan,
            run_batch(
                sandbox,
                plan.files,
                # Under RLIMIT_AS (no cgroup) a larger stack is address space the limit counts,
                # and GHC's runtime then refuses to start: only the memory is raised there.
                plan.commands()
                if sandbox.memory_limit == "rlimit-as"
                else _with_stack(plan.commands()),
                larger,
                plan.mounts,
                plan.alone,
            ),
            allowed_axioms,
            larger,
        )
        if again.finding == "checks" and again.green:
            stack = "" if sandbox.memory_limit == "rlimit-as" else " and a larger stack"
            what = f"{larger.memory_mb} MiB{stack}"
            why = f"{first.reason}; it checks with {what}, so only the limits stopped it"
            return replace(
                first, batch=again.batch, assumptions=again.assumptions, reason=why, rerun=True
            )
        if not (again.broke or again.suggested):
            return replace(again, rerun=True)  # a finding at larger limits (not cached)
        # The same failure with room to spare: the canary runs with that room too, so only
        # limits too small for any proof (not text the candidate printed) end inconclusive.
        reading, canary_limits = replace(again, rerun=True), larger
    if not (reading.broke or reading.suggested):
        return reading
    if canary_checks(language, toolchain, sandbox, canary_limits):
        repeated = " (and again with larger limits)" if reading.rerun else ""
        why = (
            f"the {language} toolchain failed on these files ({reading.reason}){repeated} while a "
            "known-good proof checks on the same toolchain and limits: a proof the checker "
            "cannot check is not a proof"
        )
        return replace(reading, finding="crashed", limit=None, reason=why)
    if reading.suggested:
        why = f"{reading.reason}; even a known-good proof does not check within these limits"
        return replace(reading, reason=why)
    if canary_checks(language, toolchain, sandbox, _raised(canary_limits)):
        why = (
            f"{reading.reason}; a known-good proof fails within these limits too and checks "
            "with larger ones, so the limits are too small for this toolchain"
        )
        return replace(reading, limit="memory", reason=why)
    why = f"{reading.reason}, and a known-good proof fails on it too"
    return replace(reading, reason=why)


def untuned(plan: Plan, toolchain: Toolchain) -> Plan:
    """``plan`` with each step that starts with the tuned command started by the plain binary."""
    start = list(toolchain.command)
    steps = [
        [toolchain.binary, *step[len(start) :]] if step[: len(start)] == start else list(step)
        for step in plan.steps
    ]
    return replace(plan, steps=steps, toolchain=replace(toolchain, launch=()))


def _raised(limits: Limits) -> Limits:
    """Larger limits for the confirming re-run (memory capped, see RERUN_MEMORY_CEILING_MB)."""
    memory = min(limits.memory_mb * RERUN_FACTOR, max(limits.memory_mb, RERUN_MEMORY_CEILING_MB))
    return limits.model_copy(
        update={
            "memory_mb": memory,
            "output_kb": limits.output_kb * RERUN_FACTOR,
            "file_mb": limits.file_mb * RERUN_FACTOR,
            "scratch_mb": limits.scratch_mb * RERUN_FACTOR,
        }
    )


def _with_stack(steps: Sequence[Sequence[str]]) -> list[list[str]]:
    """The steps with a larger stack (soft limit only, when the hard limit allows it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    prlimit = shutil.which("prlimit")
    if prlimit is None or not (hard == resource.RLIM_INFINITY or hard >= RERUN_STACK_BYTES):
        return [list(step) for step in steps]
    if soft == resource.RLIM_INFINITY or soft >= RERUN_STACK_BYTES:
        return [list(step) for step in steps]
    return [[prlimit, f"--stack={RERUN_STACK_BYTES}:", "--", *step] for step in steps]


SOURCES_LIMIT = 64 * 1024


def _sources(plan: Plan) -> dict[str, str]:
    small = sum(len(data) for data in plan.files.values()) <= SOURCES_LIMIT
    return {
        name: data.decode("utf-8", errors="replace")
        for name, data in plan.files.items()
        if small or name.startswith(WRAPPER) or name.split(".")[0] in TRUSTED_STEMS
    }


def _diagnostics(language: Language, output: str) -> list[str]:
    shown = proof_language(language).shown
    lines = [line.rstrip() for line in output.splitlines()]
    kept = [
        line
        for line in lines
        if line.strip() and not line.lstrip().startswith("Checking ") and shown(line)
    ]
    return kept[:60]
