"""The platform's commands: publishing problems, submitting, showing, re-checking, revoking,
withdrawing, nominating, external conclusions, the ledger's check, and local preflight.

``ASSAY_DB`` selects the store (default ``sqlite:///assay.db`` in the current folder). Each
command is a thin twin of one ``assay.platform.Platform`` method; ``--json`` prints its document.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._config import Config
from assay._errors import InvalidInput
from assay._files import read_regular
from assay._wire import WireModel
from assay.cli._boundary import boundary
from assay.cli._render import terminal_safe
from assay.status import Status

AS_HELP = "Who you are (default: $ASSAY_USER, else your login name)."
JSON_HELP = "Print the JSON document instead of lines for people."

problem_app = typer.Typer(
    help="Publish a problem folder, or show a problem's verification process."
)
external_app = typer.Typer(help="Conclusions that come from outside assay (external stages).")
ledger_app = typer.Typer(help="The append-only ledger.")

MAX_EVIDENCE = 16 * 1024 * 1024


def _user(given: str | None) -> str:
    return given or os.environ.get("ASSAY_USER") or getpass.getuser()


@contextmanager
def _platform() -> Iterator[Any]:
    from assay.platform import Platform

    with Platform.open(Config.from_env()) as platform:
        yield platform


def _print(document: WireModel, as_json: bool, lines: Callable[[Any], list[str]]) -> None:
    from assay.cli._app import _emit

    if as_json:
        _emit(document.to_json())
        return
    for line in lines(document):
        typer.echo(terminal_safe(line))


def _run_lines(run: Any) -> list[str]:
    lines = [f"submission {run.submission}  run {run.run}: {run.label}"]
    if run.revoked:
        lines.append(f"  revoked: {run.revoked}")
    for stage in run.stages:
        status = stage.status.label if stage.status else "-"
        lines.append(f"  {stage.name} ({stage.type}): {status}: {stage.detail}")
    return lines


def _artifacts(values: list[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for value in values:
        role, sep, path = value.partition("=")
        if not sep or not role or not path:
            raise InvalidInput(f"{value!r}: give ROLE=PATH", where="--artifact")
        if role in found:
            raise InvalidInput(f"role {role!r} is given twice", where="--artifact")
        if not os.path.lexists(path):
            raise InvalidInput(f"{path!r} does not exist", where=f"--artifact {role}")
        found[role] = Path(path)
    return found


ArtifactOption = Annotated[
    list[str] | None,
    typer.Option("--artifact", help="ROLE=PATH: a file or folder for one role (repeatable)."),
]
AsOption = Annotated[str | None, typer.Option("--as", help=AS_HELP)]
JsonOption = Annotated[bool, typer.Option("--json", help=JSON_HELP)]


@problem_app.command("publish")
@boundary
def problem_publish(
    folder: Annotated[
        Path,
        typer.Argument(
            help="The problem folder (problem.yaml and its files), or the folder packed as a "
            ".tar.gz or .zip (checked and unpacked as the web upload is)."
        ),
    ],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Publish a problem folder; an unchanged folder stores nothing new and prints the same ids."""
    from assay.platform import ArchiveLimits, publish_archive

    archive = None
    limits = ArchiveLimits()
    if folder.is_file():  # a packed folder: read it whole, then as the web upload is read
        archive = read_regular(folder, limits.total_bytes, "problem archive")
    with _platform() as platform:
        if archive is None:
            published = platform.publish(folder, _user(who))
        else:
            published = publish_archive(platform, archive, _user(who), limits)

    def lines(p: Any) -> list[str]:
        out = [
            f"problem {p.problem}",
            f"revision {p.revision}" + ("" if p.new else " (already published: nothing new)"),
            f"contract {p.contract or 'none (record-only: never verified)'}",
        ]
        for c in p.conformance:
            state = "conforms" if c["passed"] else "has NOT conformed (cannot verify)"
            out.append(f"checker {c['checker']} ({c['key']}) {state}: {c['detail']}")
        return out

    _print(published, as_json, lines)


@problem_app.command("show")
@boundary
def problem_show(
    problem: Annotated[str, typer.Argument(help="The problem id.")],
    as_json: JsonOption = False,
) -> None:
    """The verification process before anyone starts: stages, roles, references, policy."""
    with _platform() as platform:
        view = platform.problem(problem)

    def lines(v: Any) -> list[str]:
        from assay.platform import when

        out = [f"{v.problem}: {v.title}", f"revision {v.revision} ({v.revisions} published)"]
        by = f" by {v.published_by}" if v.published_by else ""
        out.append(f"published {when(v.published)}{by}")
        out.append(f"contract {v.contract or 'none: work is recorded and never verified'}")
        if v.acceptance:
            out.append(f"acceptance: {v.acceptance}")
        for i, s in enumerate(v.stages, 1):
            how = f", {s.mechanism}" if s.mechanism else ""
            out.append(f"stage {i} {s.name} ({s.type}{how}): {s.establishes}")
            out.extend(f"  check {json.dumps(spec, ensure_ascii=False)}" for spec in s.specs)
        for role in v.roles:
            need = "required" if role["required"] else "optional"
            out.append(f"role {role['name']} ({need}, at most {role['max_bytes']} bytes)")
        for ref in v.references:
            sealed = f", sealed until {when(ref.sealed_until)}" if ref.sealed_until else ""
            out.append(f"reference {ref.key}: {ref.size} bytes, sha256 {ref.sha256}{sealed}")
        for skill in v.skills:
            out.append(f"skill {skill['path']}: sha256 {skill['sha256']}")
        return out

    _print(view, as_json, lines)


@boundary
def submit(
    problem: Annotated[str, typer.Argument(help="The problem id.")],
    artifact: ArtifactOption = None,
    summary: Annotated[
        str | None, typer.Option("--summary", help="The text summary (the answer).")
    ] = None,
    who: AsOption = None,
    attempt: Annotated[
        str | None,
        typer.Option(
            "--attempt", help="Continue this attempt ('new' starts one; default: your latest)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Submit work to a problem's current revision and print its run."""
    artifacts = _artifacts(artifact or [])
    with _platform() as platform:
        run = platform.submit(problem, artifacts, summary, _user(who), attempt)
    _print(run, as_json, _run_lines)


@boundary
def show(
    submission: Annotated[str, typer.Argument(help="The submission id.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """A submission, every run of it and its current verdict."""
    with _platform() as platform:
        view = platform.show(submission, _user(who))

    def lines(v: Any) -> list[str]:
        out = [
            f"submission {v.submission} to {v.problem} by {v.participant}: {v.verdict.text}",
            f"revision {v.revision}" + ("  (nominated)" if v.nominated else ""),
        ]
        for a in v.artifacts:
            gone = " (withdrawn)" if a.withdrawn else ""
            out.append(f"artifact {a.role}: {a.size} bytes, sha256 {a.sha256}{gone}")
        for run in v.runs:
            out.extend(_run_lines(run))
        return out

    _print(view, as_json, lines)


@boundary
def recheck(
    submission: Annotated[str, typer.Argument(help="The submission id.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Evaluate a submission again: a new run (runs are never edited)."""
    with _platform() as platform:
        run = platform.recheck(submission, _user(who))
    _print(run, as_json, _run_lines)


@boundary
def revoke(
    checker: Annotated[str, typer.Option("--checker", help="The checker id (as runs name it).")],
    why: Annotated[str, typer.Option("--why", help="Why it does not implement its contract.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke every run a checker produced: kept, marked, no longer counted."""
    with _platform() as platform:
        revocation = platform.revoke(checker, why, _user(who))
    _print(
        revocation,
        as_json,
        lambda v: [f"revoked {v.checker}: {len(v.runs)} run(s) no longer count", *v.runs],
    )


@boundary
def withdraw(
    submission: Annotated[str, typer.Argument(help="The submission id.")],
    role: Annotated[str, typer.Argument(help="The role whose bytes to delete.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete an artifact's bytes; runs keep its role, size and sha256."""
    with _platform() as platform:
        view = platform.withdraw(submission, role, _user(who))
    _print(view, as_json, lambda v: [f"withdrew {role} of {v.submission}"])


@boundary
def nominate(
    submission: Annotated[str, typer.Argument(help="The submission id.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Name a submission your final one for its problem."""
    with _platform() as platform:
        view = platform.nominate(submission, _user(who))
    _print(view, as_json, lambda v: [f"nominated {v.submission} for {v.problem}"])


@external_app.command("record")
@boundary
def external_record(
    submission: Annotated[str, typer.Argument(help="The submission whose run waits.")],
    stage: Annotated[str, typer.Option("--stage", help="The external stage's name.")],
    evidence: Annotated[
        Path | None, typer.Option("--evidence", help="For a rule stage: the evidence (JSON file).")
    ] = None,
    result: Annotated[
        str | None,
        typer.Option("--result", help="For a party stage: verified, refuted or inconclusive."),
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="For a party stage: why.")] = None,
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Conclude the external stage a run waits at (evidence for a rule, or a party's word)."""
    status = None
    if result is not None:
        if result not in ("verified", "refuted", "inconclusive"):
            raise InvalidInput(
                f"{result!r}: a party records verified, refuted or inconclusive", where="--result"
            )
        status = Status(result)
    data = read_regular(evidence, MAX_EVIDENCE, "--evidence") if evidence is not None else None
    with _platform() as platform:
        run = platform.record_external(
            submission, stage, _user(who), evidence=data, status=status, reason=reason
        )
    _print(run, as_json, _run_lines)


@ledger_app.command("verify")
@boundary
def ledger_verify(as_json: JsonOption = False) -> None:
    """Walk the hash chain, re-hash every blob and find every blob a record names: exit 0 with
    the counts when intact, 1 naming the first bad row or blob."""
    with _platform() as platform:
        report = platform.verify()

    def lines(v: Any) -> list[str]:
        if v.intact:
            return [f"intact: {v.rows} rows, {v.blobs} blobs; head {v.head}"]
        return [f"NOT intact: {v.problem}"]

    _print(report, as_json, lines)
    if not report.intact:
        raise typer.Exit(1)


@boundary
def preflight(
    folder: Annotated[Path, typer.Argument(help="Your copy of the problem folder.")],
    artifact: ArtifactOption = None,
    summary: Annotated[str | None, typer.Option("--summary", help="The text summary.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Run the locally runnable stages as the platform would. NOT verification: records nothing."""
    from assay.platform import preflight as run_preflight

    view = run_preflight(folder, _artifacts(artifact or []), summary, Config.from_env())

    def lines(v: Any) -> list[str]:
        out = [f"preflight of {v.problem}: {v.note}"]
        for stage in v.stages:
            status = stage.status.label if stage.status else "not run"
            out.append(f"  {stage.name} ({stage.type}): {status}: {stage.detail}")
        return out

    _print(view, as_json, lines)


def register(app: typer.Typer) -> None:
    """Add the platform's commands to ``app``."""
    app.add_typer(problem_app, name="problem")
    app.add_typer(external_app, name="external")
    app.add_typer(ledger_app, name="ledger")
    for command in (submit, show, recheck, revoke, withdraw, nominate, preflight):
        app.command(command.__name__)(command)
