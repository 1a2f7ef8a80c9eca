"""``agda``, ``coq``, ``lean``: a proof judged by its checker as one batch process, in the sandbox.

One kind per registered proof language (``assay.proofs.LANGUAGES``), made here from the
registry: a new language needs no change in this module. Two forms: **whole file** (``file`` in
the workspace, checked against the trusted ``statement`` through a wrapper that imports it
qualified) and **hole** (``obligation`` next to the task with exactly one ``{! !}`` hole; the
final answer is what goes in it). Both go through ``assay.proofs``' one path
(``judge_source`` / ``judge_hole``), so a limit means the same here as in ``assay hole fill``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Self, cast

from pydantic import Field, model_validator

from assay._errors import SandboxUnavailable, ToolchainMissing
from assay._files import read_regular_text
from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome, workspace_text
from assay.checks._registry import kind
from assay.checks._sandboxing import sandbox_for
from assay.checks._spec import NonBlank, Spec
from assay.proofs import (
    DEFAULT_LIMITS,
    LANGUAGES,
    Attempt,
    HoleNotFound,
    Judging,
    Language,
    Terms,
    cache_for,
    judge_hole,
    judge_source,
    only_hole,
    proof_language,
)
from assay.sandbox import Limits
from assay.status import Outcome


class ProofSpec(Spec):
    """The fields every proof kind reads; each kind's subclass names its language."""

    runs_code = True

    language: ClassVar[str] = ""
    """The proof language whose kind reads this spec (set by each kind's own subclass)."""
    verifier_fields: ClassVar[tuple[str, ...]] = ("obligation",)
    workspace_fields: ClassVar[tuple[str, ...]] = ("file",)

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
    timeout: float = Field(DEFAULT_LIMITS.timeout, gt=0, le=3600)
    """Wall-clock seconds for the judgment (inconclusive when exceeded)."""
    memory_mb: int = Field(DEFAULT_LIMITS.memory_mb, gt=0)
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

    @model_validator(mode="after")
    def _language_terms(self) -> Self:
        if not self.language:
            return self
        language = proof_language(self.language)
        if self.statement is None and language.statement_required:
            raise ValueError(
                "'statement' and 'name' are required: the proof is checked against them"
            )
        if self.statement is None and self.file is not None:
            raise ValueError("a whole-file proof needs the trusted 'statement' and 'name'")
        problem = language.terms_problem(self.name, self.header)
        if problem is not None:
            raise ValueError(problem)
        return self


def _refused(shapes: list[str]) -> Outcome:
    return Outcome.refuted(f"refused before judging: {', '.join(shapes)}", {"refused": shapes})


def _judge_proof(language: Language, spec: ProofSpec, ctx: CheckContext) -> Outcome:
    terms = Terms(
        statement=spec.statement,
        name=spec.name,
        header=spec.header,
        options=spec.options,
        stdlib=spec.stdlib,
        allowed_axioms=spec.allowed_axioms,
    )
    judging = Judging(
        sandbox_for(ctx),
        Limits(timeout=spec.timeout, memory_mb=spec.memory_mb),
        cache_for(ctx.config),
        ctx.config,
        settle_limits=False,  # every limit reads the same here, whatever the canary says
    )
    try:
        if spec.file is not None:
            source = workspace_text(ctx, spec.file)
            if isinstance(source, Outcome):
                return source
            attempt = judge_source(language, source, terms, judging)
        else:
            assert spec.obligation is not None
            answer = answer_or_outcome(ctx)
            if isinstance(answer, Outcome):
                return answer
            path = (ctx.base_dir or Path.cwd()) / spec.obligation
            try:
                obligation = read_regular_text(path, ctx.config.max_file_bytes, "obligation")
                span = only_hole(proof_language(language).holes(obligation))
            except (OSError, UnicodeDecodeError) as exc:
                return Outcome.error(f"the obligation cannot be read: {type(exc).__name__}")
            except HoleNotFound as exc:
                return Outcome.error(f"the obligation is malformed: {exc}")
            attempt = judge_hole(language, obligation, span, answer, terms, judging)
    except ToolchainMissing as exc:
        return Outcome.inconclusive(str(exc))
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc))
    return _outcome(language, spec, attempt)


def _outcome(language: Language, spec: ProofSpec, attempt: Attempt) -> Outcome:
    """The kind's reading of the one path's ``Attempt``."""
    verdict = attempt.verdict
    if verdict is None:
        return _refused(attempt.refusals)
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
    if attempt.status == "limit" and attempt.limit is not None:
        return _limit_outcome(language, spec, attempt.limit, verdict.reason, evidence)
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


def _kind_for(language: Language) -> Callable[[ProofSpec, CheckContext], Outcome]:
    """The check function of ``language``'s kind, documented by the language itself."""

    def check(spec: ProofSpec, ctx: CheckContext) -> Outcome:
        return _judge_proof(language, spec, ctx)

    check.__name__ = check.__qualname__ = language
    check.__doc__ = proof_language(language).kind_doc
    return check


def _register() -> None:
    """One kind per registered proof language, with a spec that knows its language."""
    for name in LANGUAGES:
        spec = type(f"{name.capitalize()}Spec", (ProofSpec,), {"language": name})
        kind(name, spec)(_kind_for(cast(Language, name)))


_register()
