"""``agda``, ``coq``, ``lean``: a proof judged by its checker as one batch process, in the sandbox.

Two forms: **whole file** (``file`` in the workspace, checked against the trusted ``statement``
through a wrapper that imports it qualified) and **hole** (``obligation`` next to the task with
exactly one ``{! !}`` hole; the final answer is what goes in it). Shapes that let a proof assume
its goal are refused before any judgment is spent.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from assay._errors import SandboxUnavailable, ToolchainMissing
from assay._files import read_regular_text
from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome, workspace_text
from assay.checks._registry import kind
from assay.checks._sandboxing import sandbox_for
from assay.checks._spec import NonBlank, Spec
from assay.proofs._cache import JudgmentCache
from assay.proofs._holes import HoleNotFound, fill, only_hole
from assay.proofs._judges import judge, plan_for, refusals_for
from assay.proofs._languages import lean_name_problem
from assay.proofs._lean_lex import LeanLexError, header_imports
from assay.proofs._scan import agda_candidate_refusals, agda_refusals, lean_refusals
from assay.sandbox import Limits
from assay.status import Outcome

Language = Literal["agda", "coq", "lean"]


class ProofSpec(Spec):
    file: NonBlank | None = None
    """Whole-file form: the submitted proof file, relative to the workspace."""
    obligation: NonBlank | None = None
    """Hole form: the author's file with exactly one {! !} hole, relative to the task file."""
    statement: NonBlank | None = None
    """The trusted statement (a type), restated in a wrapper; required but for Agda holes."""
    name: NonBlank | None = None
    """The solution's name for the proof of ``statement``."""
    header: str = ""
    """Trusted imports the statement needs (``open import ...``, ``Require Import ...``)."""
    options: list[str] = Field(default_factory=list)
    """Agda OPTIONS flags a solution may set (unsafe ones are refused whatever this says)."""
    allowed_axioms: list[str] = Field(default_factory=list)
    """Axioms a Coq or Lean proof may use beyond none (Lean: beyond the three standard ones)."""
    stdlib: bool = True
    """Agda: put the standard library on the include path."""
    timeout: float = Field(300.0, gt=0, le=3600)
    """Wall-clock seconds for the judgment (inconclusive when exceeded)."""
    memory_mb: int = Field(4096, gt=0)
    """Address space per process, in MiB."""
    limits_are_rules: bool = False
    """A judgment stopped by a limit (time, memory, stack) refutes instead of being inconclusive."""

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if (self.file is None) == (self.obligation is None):
            raise ValueError("give exactly one of 'file' (whole file) and 'obligation' (hole)")
        if (self.statement is None) != (self.name is None):
            raise ValueError("'statement' and 'name' go together")
        return self


class StatementSpec(ProofSpec):
    @model_validator(mode="after")
    def _needs_statement(self) -> Self:
        if self.statement is None:
            raise ValueError(
                "'statement' and 'name' are required: the proof is checked against them"
            )
        return self


class AgdaSpec(ProofSpec):
    @model_validator(mode="after")
    def _whole_file_needs_statement(self) -> Self:
        if self.file is not None and self.statement is None:
            raise ValueError("a whole-file proof needs the trusted 'statement' and 'name'")
        return self


@lru_cache(maxsize=8)
def _cache(folder: str | None) -> JudgmentCache | None:
    if folder == "off":
        return None
    return JudgmentCache(Path(folder) if folder else None)


def _judge_proof(language: Language, spec: ProofSpec, ctx: CheckContext) -> Outcome:
    if spec.file is not None:
        source = workspace_text(ctx, spec.file)
        if isinstance(source, Outcome):
            return source
    else:
        assert spec.obligation is not None
        answer = answer_or_outcome(ctx)
        if isinstance(answer, Outcome):
            return answer
        path = (ctx.base_dir or Path.cwd()) / spec.obligation
        try:
            obligation = read_regular_text(path, ctx.config.max_file_bytes, "obligation")
            span = only_hole(obligation, agda=language == "agda")
        except (OSError, UnicodeDecodeError) as exc:
            return Outcome.error(f"the obligation cannot be read: {type(exc).__name__}")
        except HoleNotFound as exc:
            return Outcome.error(f"the obligation is malformed: {exc}")
        if language == "agda":
            shapes = agda_candidate_refusals(answer)
            if shapes:
                return Outcome.refuted(
                    f"refused before judging: {', '.join(shapes)}", {"refused": shapes}
                )
        source = fill(obligation, span, answer, parenthesize=language == "agda")
    if language == "lean":
        shapes = lean_refusals(source, header_imports(spec.header))
    elif language == "agda":
        shapes = agda_refusals(source, spec.options, spec.header)
    else:
        shapes = refusals_for(language, source, spec.options)
    if shapes:
        return Outcome.refuted(f"refused before judging: {', '.join(shapes)}", {"refused": shapes})
    try:
        plan = plan_for(
            language,
            source,
            statement=spec.statement,
            name=spec.name,
            header=spec.header,
            options=spec.options,
            stdlib=spec.stdlib,
        )
        judgment = judge(
            language,
            plan,
            sandbox_for(ctx),
            Limits(timeout=spec.timeout, memory_mb=spec.memory_mb),
            _cache(ctx.config.judgment_cache),
            spec.allowed_axioms,
        )
    except ToolchainMissing as exc:
        return Outcome.inconclusive(str(exc))
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc))
    if judgment.verdict is None:
        shapes = judgment.refusals
        return Outcome.refuted(f"refused before judging: {', '.join(shapes)}", {"refused": shapes})
    verdict = judgment.verdict
    evidence = verdict.to_json()
    cached = " (cached verdict)" if verdict.cached else ""
    if verdict.green:
        return Outcome.verified(
            f"{language} checked the proof{cached}: {verdict.meaning}", evidence
        )
    if verdict.finding == "checks":
        return Outcome.refuted(
            f"the proof depends on assumptions that are not allowed: {', '.join(verdict.assumptions)}",
            evidence,
        )
    if verdict.finding == "does_not_check":
        shown = " | ".join(verdict.diagnostics[:6])[:600]
        return Outcome.refuted(f"{language} rejected the proof{cached}: {shown}", evidence)
    if verdict.finding in ("crashed", "misbehaved"):
        return Outcome.refuted(verdict.reason, evidence)
    if verdict.limit is not None:
        return _limit_outcome(language, spec, verdict.limit, verdict.reason, evidence)
    ended = verdict.reason or f"exit code {verdict.exit_code}"
    return Outcome.error(
        f"the {language} checker failed ({ended}); this says nothing about the proof", evidence
    )


def _limit_outcome(
    language: Language, spec: ProofSpec, limit: str, reason: str, evidence: dict[str, Any]
) -> Outcome:
    """A limit stopped the judgment: no finding, unless the author made the limits rules."""
    if limit == "time":
        what = f"did not finish within {spec.timeout:g}s"
    elif limit == "memory":
        what = f"hit the memory limit (memory_mb {spec.memory_mb}): {reason}"
    else:
        what = f"hit the {limit} limit: {reason}"
    if spec.limits_are_rules:
        return Outcome.refuted(
            f"the {language} judgment {what}, which this check's rules forbid", evidence
        )
    return Outcome.inconclusive(f"the {language} judgment {what}", evidence)


@kind("agda", AgdaSpec)
def agda(spec: AgdaSpec, ctx: CheckContext) -> Outcome:
    """Agda type-checks the proof under ``--safe`` (exit 0), against the trusted statement.

    The file is read with Agda 2.6.2.2's own lexical rules. Refused before judging: ``postulate``
    (also in ``let``), ``primTrustMe`` and ``primEraseEquality``, every pragma but OPTIONS,
    OPTIONS flags beyond ``options`` (the unsafe ones and ``--cubical`` never), text Agda cannot
    lex, a module name that is not a plain name, and every import outside an allow-list: the
    ``header``'s modules, agda-stdlib's ``--safe`` modules (no sized types) and Agda's safe
    builtins; never ``Agda.Primitive.Cubical`` (Agda 2.6.2.2 lets a ``--safe`` file import it,
    and its ``primHComp`` under a ``with`` proves ``⊥``), ``Agda.Builtin.Cubical.*``,
    ``TrustMe``, ``Size``, ``Equality.Rewrite``/``Erase`` or ``Reflection.External``; the
    cubical primitives' names are refused too. A hole candidate must be one term (no
    declaration, comment, pragma or line break). A proof file over ``max_file_bytes`` refutes.
    Exit 42 (a type error, an open hole, a ``--safe`` violation) refutes; a toolchain crash
    refutes when a known-good proof still checks (else ``error``); a limit is inconclusive
    unless ``limits_are_rules``.
    """
    return _judge_proof("agda", spec, ctx)


@kind("coq", StatementSpec)
def coq(spec: StatementSpec, ctx: CheckContext) -> Outcome:
    """coqc compiles the statement alone, then the proof and a wrapper; coqchk and Print
    Assumptions audit the result.

    The statement (with ``header``) is compiled before the solution exists, so none of the
    solution's instances, coercions, notations, hints or options can change what it means; the
    wrapper checks ``Solution.<name>`` against it by conversion. coqc exits 0 on ``Admitted``,
    ``Hypothesis`` and ``Unset Guard Checking``, so exit 0 is not enough: green also needs
    coqchk (Coq's independent kernel checker, over the compiled files) to find no axiom of the
    solution, unsafe fixpoint, assumed positivity or type-in-type, and ``Print Assumptions``, in
    a step that only loads the compiled wrapper, to list nothing beyond ``allowed_axioms``.
    A toolchain crash the solution provokes (an anomaly) refutes when a known-good proof still
    checks; a limit (time, or memory/stack confirmed by a larger run that checks) is
    inconclusive unless ``limits_are_rules``. ``Admitted``, ``admit``, axioms, disabled
    checking, plugins and file-writing commands are refused before judging.
    """
    return _judge_proof("coq", spec, ctx)


class LeanSpec(StatementSpec):
    @model_validator(mode="after")
    def _lean_names(self) -> Self:
        assert self.name is not None  # StatementSpec requires it
        problem = lean_name_problem(self.name)
        if problem is not None:
            raise ValueError(f"'name': {problem}")
        try:
            header_imports(self.header)
        except LeanLexError as exc:
            raise ValueError(f"'header' cannot be read as Lean: {exc}") from None
        return self


@kind("lean", LeanSpec)
def lean(spec: LeanSpec, ctx: CheckContext) -> Outcome:
    """Lean compiles the solution alone, the statement without it, and a wrapper; a separate
    audit process re-checks every declaration with the kernel and lists the axioms.

    The solution is compiled in a folder of its own, as code that may run (library tactics can
    run its declarations): only its compiled ``.olean`` is copied out. The statement is
    elaborated in its own module (the ``header`` and ``def AssayStatement.statement : Prop :=
    (statement)``) that never imports the solution; the wrapper checks ``@_root_.<name>``
    against it by conversion. The audit (a trusted program run with ``lean --run`` in a process
    that never imports the solution, and imports only the header's modules) refuses any other
    import before importing, replays every declaration of the three modules through the kernel
    (so ``debug.skipKernelTC`` cannot help), checks the wrapper states exactly the statement at
    all its universe levels, and prints the axioms as marked, escaped lines; green needs only
    propext, Classical.choice and Quot.sound (or ``allowed_axioms``). Refused first, by tokens:
    ``sorry``, ``axiom``, ``native_decide`` and ``decide +native``, ``unsafe``, every
    metaprogramming command (``run_cmd``, ``elab``, ``macro``, ...), Aesop rule additions,
    instances and notation, attributes beyond simp-like tags, options beyond limits and
    linters, ``#`` commands, «escaped» names, imports other than the header's (never ``Lean``),
    and source whose tokens Lean could read differently. Runs where ``lake`` is on PATH
    (``ASSAY_LEAN_PROJECT`` names a Lake project for Mathlib); elsewhere it is inconclusive,
    saying so.
    """
    return _judge_proof("lean", spec, ctx)
