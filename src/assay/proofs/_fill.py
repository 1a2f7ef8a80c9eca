"""The one hole path: fill → scan → judge → classify, for ``assay hole fill`` and the kinds.

``judge_source`` judges one whole file and ``judge_hole`` first puts a candidate into an
obligation's hole; both end in an ``Attempt`` whose ``status`` means the same wherever it is
read. A check stopped by a limit is ``limit``: a limit says nothing about the work. For
``fill_hole`` the known-good canary then decides whether it is the toolchain's: ``error`` when
the canary does not fit in the same limits either (a candidate can cause a ``limit``, never an
``error``). The kinds read an ``Attempt`` as an outcome (every limit: inconclusive, or refuted
with ``limits_are_rules``), ``fill_hole`` as a ``HoleResult``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import InvalidInput
from assay._wire import WireModel
from assay.proofs._cache import JudgmentCache
from assay.proofs._canary import canary_checks
from assay.proofs._holes import HoleStatus, classify, fill
from assay.proofs._judges import DEFAULT_LIMITS, judge, plan_for, toolchain_for
from assay.proofs._paths import read_source
from assay.proofs._registry import Language, proof_language
from assay.proofs._verdict import Verdict
from assay.sandbox import Limits, Sandbox, configured_sandbox


@dataclass(frozen=True)
class Terms:
    """What the author fixed for every candidate: the trusted statement and the solution's name
    (None: a hole obligation checked as it stands), the header it needs, the Agda options a
    solution may set, the standard library, and the axioms a proof may use."""

    statement: str | None = None
    name: str | None = None
    header: str = ""
    options: Sequence[str] = ()
    stdlib: bool = True
    allowed_axioms: Sequence[str] = ()

    def __post_init__(self) -> None:
        """A statement without the name to check against it (or the reverse) would judge the
        solution alone, with no wrapper: nothing would tie a green verdict to the statement."""
        if (self.statement is None) != (self.name is None):
            raise InvalidInput("'statement' and 'name' go together", where="Terms")


@dataclass(frozen=True)
class Judging:
    """Where and within what a judgment runs: the sandbox, the limits, the cache (None: no
    cache) and the configuration its toolchains come from."""

    sandbox: Sandbox
    limits: Limits = DEFAULT_LIMITS
    cache: JudgmentCache | None = None
    config: Config = DEFAULT_CONFIG
    settle_limits: bool = True
    """Ask the known-good canary whether a limit is the toolchain's (status ``error``) or only
    this check's (``limit``). The kinds read both as inconclusive, so they skip the extra run."""


@dataclass(frozen=True)
class Attempt:
    """How one candidate (or one whole file) fared: the status, the open holes it left, the
    verdict behind it (None when refused before judging), what was refused, the diagnostics,
    and which limit stopped it (with status ``limit``)."""

    status: HoleStatus
    remaining_holes: int = 0
    verdict: Verdict | None = None
    refusals: list[str] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    limit: str | None = None


def _refused(shapes: list[str]) -> Attempt:
    return Attempt("refused", refusals=shapes, diagnostics=[f"refused: {s}" for s in shapes])


def not_text(source: str) -> list[str]:
    """A refusal when ``source`` holds a code point UTF-8 cannot encode (a lone surrogate: what
    ``surrogateescape`` makes of bytes that are not UTF-8), else none. Such text cannot be
    written as a source file, and it must be the candidate's refusal, never assay's error."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        return [f"a code point that is not Unicode text (U+{ord(source[exc.start]):04X})"]
    return []


def judge_source(language: Language, source: str, terms: Terms, judging: Judging) -> Attempt:
    """Scan ``source`` for refused shapes, judge it, and classify the verdict.

    Raises ToolchainMissing (no toolchain here) and SandboxUnavailable; every other outcome is
    an ``Attempt``."""
    shapes = not_text(source) or proof_language(language).refusals(
        source, terms.header, terms.options, judging.config, obligation=terms.statement is None
    )
    if shapes:
        return _refused(shapes)
    plan = plan_for(
        language,
        source,
        statement=terms.statement,
        name=terms.name,
        header=terms.header,
        options=terms.options,
        stdlib=terms.stdlib,
        config=judging.config,
    )
    judgment = judge(
        language,
        plan,
        judging.sandbox,
        judging.limits,
        judging.cache,
        terms.allowed_axioms,
        config=judging.config,
    )
    if judgment.verdict is None:  # the plan itself carries a refused shape
        return _refused(judgment.refusals)
    verdict = judgment.verdict
    status, remaining = classify(
        verdict.exit_code,
        verdict.finding,
        "\n".join(verdict.diagnostics),
        verdict.limit,
        proof_language(language).remaining_holes,
        verdict.green,
    )
    diagnostics = verdict.diagnostics
    if status == "limit" and judging.settle_limits:
        toolchain = judgment.plan.toolchain or toolchain_for(language, judging.config)
        if canary_checks(language, toolchain, judging.sandbox, judging.limits):
            diagnostics = [*diagnostics, f"stopped by the {verdict.limit} limit: {verdict.reason}"]
        else:
            status = "error"  # not the candidate's doing: a known-good proof does not fit either
            diagnostics = [
                *diagnostics,
                f"{verdict.reason}; a known-good proof fails within these limits too",
            ]
    limit = verdict.limit if status == "limit" else None
    return Attempt(status, remaining, verdict, [], diagnostics, limit)


def judge_hole(
    language: Language,
    obligation: str,
    span: tuple[int, int],
    candidate: str,
    terms: Terms,
    judging: Judging,
) -> Attempt:
    """Put ``candidate`` into the hole at ``span`` of the ``obligation`` text and judge the
    whole file (``judge_source``); a candidate the language refuses on its own is not run."""
    reader = proof_language(language)
    shapes = reader.candidate_refusals(candidate)
    if shapes:
        return _refused(shapes)
    source = fill(obligation, span, candidate, parenthesize=reader.parenthesize)
    return judge_source(language, source, terms, judging)


class HoleResult(WireModel):
    """One candidate's judgment in one hole (``assay hole fill``): the search loop's signal.

    ``solved`` is the only success; ``verdict`` is the batch judgment behind it (absent when the
    candidate was refused before any judgment)."""

    schema_: Literal["assay.hole/1"] = Field("assay.hole/1", alias="schema")
    candidate: str
    status: HoleStatus
    limit: str | None = None
    """With status ``limit``: which limit stopped the check (``time``, ``memory``, ...)."""
    remaining_holes: int
    elapsed_ms: int
    checked_from_source: bool
    verdict: Verdict | None
    diagnostics: list[str]


def fill_hole(
    obligation: Path | str,
    line: int,
    column: int,
    candidate: str,
    *,
    sandbox: Sandbox | None = None,
    cache: JudgmentCache | None = None,
    stdlib: bool = True,
    options: Sequence[str] = (),
    limits: Limits | None = None,
    config: Config = DEFAULT_CONFIG,
    language: Language = "agda",
) -> HoleResult:
    """Judge ``candidate`` in the hole at ``line``:``column`` of the ``obligation`` file.

    The sandbox defaults to the one ``config`` describes, the limits to ``DEFAULT_LIMITS``;
    ``cache``: None judges afresh (``cache_for(config)`` is the configured cache). Raises
    HoleNotFound (no hole there), InvalidInput (the obligation is not a regular UTF-8 file of
    at most 4 MiB, or ``language`` judges only against a trusted statement, which a hole file
    alone does not give: Coq and Lean holes are the kinds' hole form) and ToolchainMissing;
    every other outcome, a refusal included, is a
    HoleResult (see ``judge_source`` for ``limit`` and ``error``). The obligation file is only
    read.
    """
    try:
        text = read_source(Path(obligation)).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", where=str(obligation)) from None
    reader = proof_language(language)
    if reader.statement_required:
        raise InvalidInput(
            f"a {language} hole is judged against a trusted statement: use the {language} "
            "kind's hole form (obligation, statement, name)",
            where=str(obligation),
        )
    span = reader.hole_at(text, line, column)
    judging = Judging(
        sandbox or configured_sandbox(config), limits or DEFAULT_LIMITS, cache, config
    )
    attempt = judge_hole(
        language, text, span, candidate, Terms(options=options, stdlib=stdlib), judging
    )
    verdict = attempt.verdict
    return HoleResult(
        candidate=candidate,
        status=attempt.status,
        limit=attempt.limit,
        remaining_holes=attempt.remaining_holes,
        elapsed_ms=0 if verdict is None else verdict.elapsed_ms,
        checked_from_source=False if verdict is None else verdict.checked_from_source,
        verdict=verdict,
        diagnostics=attempt.diagnostics,
    )
