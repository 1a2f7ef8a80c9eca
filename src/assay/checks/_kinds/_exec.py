"""Kinds that run code in the sandbox: ``shell``, ``python`` and ``hidden_python``.

The checked code sees the workspace read-only at /workspace (a snapshot), a private /tmp, no
network and no host processes. It passes only if it ran to its last line (reported by the runner
over a channel the code cannot write without the run's nonce), exited as expected, and printed
what the spec asks for. A timeout is inconclusive; other limits are inconclusive unless the spec
says they are part of the rules (``limits_are_rules``), when they refute.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from assay._errors import SandboxUnavailable
from assay._files import read_regular_text
from assay.checks._context import CheckContext
from assay.checks._kinds._common import shorten
from assay.checks._patterns import PatternTimeout, search, validate_pattern
from assay.checks._registry import kind
from assay.checks._sandboxing import limits_outcome, sandbox_for, staged_workspace
from assay.checks._spec import NonBlank, Spec
from assay.sandbox import (
    CANDIDATE_MARK,
    CANDIDATE_OUTPUT,
    PROTECTED_BASH,
    Limits,
    Mount,
    RunResult,
    judge_mounts,
    runner_control,
)
from assay.status import Outcome

WORKSPACE = "/workspace"


class RunSpec(Spec):
    """The limits of a kind that runs code in the sandbox."""

    runs_code = True

    timeout: float = Field(10.0, gt=0, le=600)
    """Wall-clock seconds; the whole sandbox is killed when they run out (inconclusive)."""
    memory_mb: int = Field(1024, gt=0)
    """Address space per process, in MiB."""
    output_kb: int = Field(256, gt=0)
    """Output kept for the verdict and its detail; more is dropped (and said so)."""
    limits_are_rules: bool = False
    """True: hitting the memory, process or output limit refutes instead of being inconclusive."""

    def limits(self) -> Limits:
        """The sandbox limits these fields ask for."""
        return Limits(timeout=self.timeout, memory_mb=self.memory_mb, output_kb=self.output_kb)


class CodeSpec(RunSpec):
    """Code the check runs in the sandbox, and what its end must look like."""

    code: NonBlank
    """The check's code; it runs with the workspace as the working directory."""
    expect_exit: int = 0
    """Exit status required once the code has run to its end."""
    value: NonBlank | None = None
    """Text the output must contain."""
    pattern: Annotated[str, AfterValidator(validate_pattern)] | None = None
    """A regular expression the output must match (time-limited)."""

    @model_validator(mode="after")
    def _at_most_one(self) -> Self:
        if self.value is not None and self.pattern is not None:
            raise ValueError("give at most one of 'value' and 'pattern'")
        return self


class PythonSpec(CodeSpec):
    """A python check: it passes by running to its last line, so no exit status can be asked."""

    @model_validator(mode="after")
    def _runs_to_the_end(self) -> Self:
        if self.expect_exit != 0:
            raise ValueError(
                "expect_exit: a python check passes by running to its end, which exits 0; "
                "assert what you expect instead"
            )
        return self


class HiddenSpec(RunSpec):
    """A python check withheld from the proposer: inline or from a file beside the task."""

    verifier_fields = ("file",)
    private_fields = ("code",)

    code: NonBlank | None = None
    """The withheld check, inline in the task."""
    file: NonBlank | None = None
    """Or a file next to the task file holding it."""

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.code is None) == (self.file is None):
            raise ValueError("give exactly one of 'code' and 'file'")
        return self


Mode = Literal["shell", "python"]


def _run(
    ctx: CheckContext, mode: Mode, code: str, spec: RunSpec, filename: str
) -> tuple[RunResult | Outcome, str]:
    """The run's result and the delimiter after which only the candidate's output follows."""
    try:
        sandbox = sandbox_for(ctx)
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc)), ""
    mounts = judge_mounts(shell=mode == "shell")
    if (
        mode == "shell"
        and sandbox.isolation == "bwrap"
        and not any(m.target == PROTECTED_BASH for m in mounts)
    ):
        # A readable bash is dumpable: what the check starts could read its report token.
        return Outcome.error(
            "cannot install the copy of bash the sandbox user cannot read (is "
            f"{tempfile.gettempdir()}/.assay-judge-{os.geteuid()} someone else's?); "
            "a shell check never runs with a readable bash"
        ), ""
    # No workspace: the check runs in /tmp (unisolated: in an empty private folder).
    folder = ctx.workspace is not None or sandbox.isolation != "bwrap"
    cwd = WORKSPACE if folder else "/tmp"
    try:
        prepared = sandbox.prepare(
            sandbox.python_argv(),
            cwd=cwd,
            mounts=mounts,
            limits=spec.limits(),
            folder_at=WORKSPACE if folder else None,
            waits=True,
        )
    except SandboxUnavailable as exc:
        return Outcome.error(str(exc)), ""
    with prepared:
        if ctx.workspace is not None:
            staged = staged_workspace(ctx, prepared.folder)
            if isinstance(staged, Outcome):
                return staged, ""
        if folder:
            cwd = sandbox.inside_path(WORKSPACE, [Mount(prepared.folder, WORKSPACE)])
        # The judge never has the workspace on its sys.path: it reaches it only by proxy.
        control, nonce = runner_control(mode, code, filename, cwd, memory_mb=spec.memory_mb)
        delimiter = f"\n{CANDIDATE_OUTPUT} {nonce[16:]}\n"  # as the judge builds it
        try:
            result = prepared.run(control, nonce)
        except SandboxUnavailable as exc:
            return Outcome.error(str(exc)), ""
        return result, delimiter


def _judge(
    run: tuple[RunResult | Outcome, str], spec: RunSpec, hidden: bool, regex_timeout: float
) -> Outcome:
    """The outcome of a run; a hidden check's output never reaches the detail or evidence."""
    result, delimiter = run
    if isinstance(result, Outcome):
        return result
    evidence = {
        "isolation": result.isolation,
        "exit_code": result.exit_code,
        "elapsed": round(result.elapsed, 3),
        "memory_limit": result.memory_limit,
    }
    tail = "" if hidden or not result.output else f"; output ends: «{shorten(result.tail, 300)}»"
    if result.truncated and not hidden:
        tail += (
            f" (output truncated: {result.output_bytes} bytes written, {spec.output_kb} KiB kept)"
        )
    own = _own_output(result.output, delimiter)
    limited = limits_outcome(
        result, spec.limits(), spec.limits_are_rules, evidence, getattr(spec, "expect_exit", 0)
    )
    if limited is not None:
        return limited
    if result.runner_failed:
        return Outcome.error("assay's runner failed after the check ran; no conclusion", evidence)
    if not result.started:
        detail = "the sandbox failed to start the check" + (
            "" if hidden else f": «{shorten(result.tail, 300)}»"
        )
        return Outcome.error(detail, evidence)
    expect_exit = getattr(spec, "expect_exit", 0)
    if result.tampered:
        return Outcome.refuted(
            "the checked code replaced sys.exit, builtins.exit or another function a check "
            "relies on to fail: refused",
            evidence,
        )
    if not result.completed:
        reason = _judge_reason(own) if not hidden else None
        if reason is not None:
            return Outcome.refuted(f"check exited before completing: {reason}", evidence)
        if result.signal:
            ended = f"it was killed by signal {result.signal}"
        elif result.exit_code == 0:
            ended = "it exited with status 0 before its last line: an early exit is not a pass"
        else:
            ended = f"exit code {result.exit_code}"
        return Outcome.refuted(f"check exited before completing ({ended}){tail}", evidence)
    if result.exit_code != expect_exit:
        return Outcome.refuted(
            f"exit code {result.exit_code}, expected {expect_exit}{tail}", evidence
        )
    value, pattern = getattr(spec, "value", None), getattr(spec, "pattern", None)
    if value is not None and value not in own:
        return Outcome.refuted(f"the output does not contain {shorten(value)!r}{tail}", evidence)
    if pattern is not None:
        try:
            found = search(pattern, own, regex_timeout)
        except PatternTimeout as exc:
            return Outcome.inconclusive(f"matching the output: {exc}", evidence)
        if found is None:
            return Outcome.refuted(f"the output has no match for {pattern!r}{tail}", evidence)
    return Outcome.verified("the check ran to its end and passed", evidence)


_REASON = "\nassay: refuted: "


def _own_output(output: str, delimiter: str) -> str:
    """The run's output without what the candidate's process printed (python checks).

    The judge writes the candidate's output only at the end, after a delimiter line made from
    the run's nonce (which candidate code never sees): everything before it is the check's own.
    Should the delimiter have been cut away with a truncated output, the candidate's lines are
    still recognised by their mark. What candidate code prints never supplies the text a
    ``value`` or ``pattern`` asks for.
    """
    at = output.find(delimiter) if delimiter else -1
    if at >= 0:
        return output[:at]
    if CANDIDATE_MARK not in output:
        return output
    kept = [line for line in output.split("\n") if not line.startswith(CANDIDATE_MARK)]
    return "\n".join(kept)


def _judge_reason(output: str) -> str | None:
    """The judge's own last words (a refusal, a failed test), when the run ended on one.

    Only read for a run that did not complete, and only to explain it: text the candidate
    prints can at most change the wording of its own refutation.
    """
    at = output.rfind(_REASON)
    if at < 0 or output[at + len(_REASON) :].count("\n") > 1:
        return None
    return shorten(output[at + len(_REASON) :].strip(), 400)


@kind("shell", CodeSpec)
def shell(spec: CodeSpec, ctx: CheckContext) -> Outcome:
    """``code`` runs under bash in the sandbox, to its end, exiting ``expect_exit``.

    An ``exit`` before the last line (in the check, or in a script it sources) is refuted as
    "exited before completing". Optional ``value`` / ``pattern`` must appear in the output.
    The shell holds no harness state; but a script the check *sources* runs in that shell and
    controls it entirely: run the agent's scripts as processes (``bash ./solve.sh``) instead.
    """
    run = _run(ctx, "shell", spec.code, spec, "<shell check>")
    return _judge(run, spec, hidden=False, regex_timeout=ctx.config.regex_timeout)


@kind("python", PythonSpec)
def python(spec: PythonSpec, ctx: CheckContext) -> Outcome:
    """``code`` runs in Python in the sandbox, with the workspace importable, to its last line.

    Passing means every statement ran, so every assert held. A workspace module the check
    imports runs in its own process: its functions and classes are called across, and only
    plain data comes back (None, bool, numbers, str, bytes, and lists, tuples, dicts and sets
    of them, with their exact types); a subclass of those, or comparing a candidate object, is
    refuted. Lists, dicts and sets an argument holds are changed in place as the candidate's
    code changed them. The standard library always wins over a workspace file of the same
    name, and code from the workspace never runs in the check's process (a module found
    through a ``sys.path`` entry the check adds is imported by proxy too; unpickling anything
    but plain data is refused: load the agent's data with json or
    ``numpy.load(allow_pickle=False)``). ``unittest.main()``, top-level ``def test_*():``
    functions and pytest ``class Test*:`` classes work as their users expect: a failing test,
    an async or generator test, or no test at all, refutes. What candidate code prints is
    never matched by ``value`` / ``pattern``.
    """
    run = _run(ctx, "python", spec.code, spec, "<python check>")
    return _judge(run, spec, hidden=False, regex_timeout=ctx.config.regex_timeout)


@kind("hidden_python", HiddenSpec)
def hidden_python(spec: HiddenSpec, ctx: CheckContext) -> Outcome:
    """A Python check withheld from the proposer runs like ``python``; its source never shows.

    The source (inline ``code`` or a ``file`` next to the task) reaches the sandbox through a
    pipe that is read and closed before any checked code runs: it is never on the sandbox's
    disk. No output of a hidden check appears in its outcome, only whether it passed and why in
    general terms.
    """
    code = spec.code
    if code is None:
        assert spec.file is not None
        path = (ctx.base_dir or Path.cwd()) / spec.file
        try:
            code = read_regular_text(path, ctx.config.max_file_bytes, "hidden check file")
        except (OSError, UnicodeDecodeError) as exc:
            return Outcome.error(f"the hidden check file cannot be read: {type(exc).__name__}")
    run = _run(ctx, "python", code, spec, "<hidden check>")
    return _judge(run, spec, hidden=True, regex_timeout=ctx.config.regex_timeout)
