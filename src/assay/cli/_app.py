"""``assay`` commands. Each opens its inputs, calls one library function and prints what it
returns: exit 0 when a verdict was produced (whatever it says), 2 for invalid input, with one line
on stderr naming the file and field. Domain logic lives in the library, never here; errors become
exit codes in one place, ``_boundary`` (every command is wrapped in ``@boundary``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._config import Config
from assay._errors import AssayError, InvalidInput
from assay._files import read_regular, read_regular_text
from assay._strict import StrictJSONError, loads_strict
from assay.checks import all_kinds, check_task, score_answers
from assay.cli import (
    _batch_cmds,
    _mcp_cmds,
    _platform_cmds,
    _prove_cmds,
    _review16_cmds,
    _review_cmds,
    _serve_cmds,
)
from assay.cli._boundary import about, boundary, report_error, say
from assay.cli._render import (
    kinds_document,
    kinds_markdown,
    print_conformance,
    print_kinds,
    print_report,
)
from assay.status import Outcome, Report, combine

app = typer.Typer(
    name="assay",
    help="Decide whether a result is correct, and say exactly what was checked.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


# Left as \u escapes in printed JSON: lone surrogates (not encodable), C1 controls (a terminal
# acts on them), line and paragraph separators and bidi controls. JSON already escapes C0.
_ESCAPED = re.compile(
    "[\ud800-\udfff\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _emit(record: Any) -> None:
    """Print one JSON line; encodable and terminal-inert whatever strings ``record`` holds."""
    text = json.dumps(record, ensure_ascii=False, default=repr)
    typer.echo(_ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _failed_report(exc: Exception) -> Report:
    """The report of a task assay failed on: status error, so the other tasks still report."""
    return combine([Outcome.error(f"assay failed on this task: {type(exc).__name__}: {exc}")])


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read the {what}: {exc.strerror}", where=str(path)) from None
    try:
        return loads_strict(text)
    except StrictJSONError as exc:
        raise InvalidInput(f"the {what} is not valid JSON: {exc}", where=str(path)) from None


@app.command()
@boundary
def check(
    tasks: Annotated[
        list[Path], typer.Argument(help="Task files (JSON): checks plus the episode.")
    ],
    answer_file: Annotated[
        Path | None, typer.Option("--answer-file", help="Read the final answer from this file.")
    ] = None,
    human: Annotated[bool, typer.Option("--human", help="Print a table instead of JSON.")] = False,
    allow_unisolated: Annotated[
        bool,
        typer.Option(
            "--allow-unisolated",
            help="Let untrusted checks run without bubblewrap (outcomes then say isolation: none).",
        ),
    ] = False,
) -> None:
    """Run the checks of each task file and print one JSON report per task (one per line)."""
    config = Config.from_env()
    if allow_unisolated:
        config = config.model_copy(update={"allow_unisolated": True})
    answer = None
    if answer_file is not None:
        try:
            answer = read_regular_text(answer_file, config.max_file_bytes, "answer file")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"cannot read the answer file: {exc}", where=str(answer_file)
            ) from None
    worst = 0
    for task in tasks:  # one task never takes another down: each is caught on its own
        try:
            report = check_task(task, answer=answer, config=config)
        except AssayError as exc:
            worst = max(worst, report_error(exc))
            continue
        except Exception as exc:
            say(f"{task}: internal error: {type(exc).__name__}: {exc}")
            report, worst = _failed_report(exc), max(worst, 1)
        try:
            if human:
                print_report(str(task), report)
            else:
                _emit(report.model_copy(update={"task": str(task)}).to_json())
        except Exception as exc:  # printing must not lose the reports still to come
            say(f"{task}: internal error: {type(exc).__name__}: {exc}")
            _emit(_failed_report(exc).model_copy(update={"task": str(task)}).to_json())
            worst = max(worst, 1)
    if worst:
        raise typer.Exit(worst)


@app.command()
@boundary
def verify(
    submission: Annotated[Path, typer.Argument(help='{"outputs": {...}, "reported_reward": ...}')],
    key: Annotated[Path, typer.Argument(help="The answer key: {task_id: value}.")],
    detail: Annotated[
        bool, typer.Option("--detail", help="Also list the wrong, missing and extra task ids.")
    ] = False,
) -> None:
    """Recompute the reward of a submission against an answer key (type-strict, exact coverage)."""
    answer_key = _read_json(key, "answer key")
    if not isinstance(answer_key, dict):
        raise InvalidInput("the answer key must be a JSON object {task_id: value}", where=str(key))
    try:
        text = read_regular(submission, Config.from_env().max_file_bytes, "submission")
    except OSError as exc:
        raise InvalidInput(
            f"cannot read the submission: {exc.strerror}", where=str(submission)
        ) from None
    try:
        parsed: Any = loads_strict(text)
    except StrictJSONError as exc:
        typer.echo(
            f"assay: {submission}: not valid JSON ({exc}); scored as a malformed submission",
            err=True,
        )
        parsed = None
    score = score_answers(parsed, answer_key)
    typer.echo(json.dumps(score.to_json(detail=detail)))


@app.command()
@boundary
def kinds(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the kinds reference (docs/kinds.md).")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the kinds and their fields as JSON.")
    ] = False,
) -> None:
    """List every check kind with its spec fields and what a pass means."""
    registered = all_kinds()
    if markdown:
        typer.echo(kinds_markdown(registered), nl=False)
    elif as_json:
        typer.echo(json.dumps(kinds_document(registered).to_json(), indent=2))
    else:
        print_kinds(registered)


checker_app = typer.Typer(help="External checker programs (the /input, /output protocol).")
app.add_typer(checker_app, name="checker")


@checker_app.command("conform")
@boundary
def checker_conform(
    program: Annotated[
        Path, typer.Argument(help="The checker: a file (.py runs with python3) or a folder.")
    ],
    fixtures: Annotated[
        Path,
        typer.Argument(help="A folder of fixture folders (artifacts/, reference/, expected.json)."),
    ],
    command: Annotated[
        str | None,
        typer.Option("--command", help="The checker's argv inside the sandbox, space-separated."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per fixture.")] = False,
    result_channel: Annotated[
        str, typer.Option("--result-channel", help="Where the checker concludes: file or fd.")
    ] = "file",
) -> None:
    """Run a checker against its conformance fixtures; exit 1 unless every fixture passes."""
    from assay.sandbox import configured_sandbox, conform

    config = Config.from_env()  # the sandbox and the staging cap obey it, as in `check`
    results = conform(
        program,
        fixtures,
        command.split() if command else None,
        sandbox=configured_sandbox(config),
        max_bytes=config.max_staged_mb * 1024 * 1024,
        result_channel=result_channel,
    )
    if as_json:
        for r in results:
            _emit(r.to_json())
    else:
        print_conformance(results)
    if not all(r.passed for r in results):
        raise typer.Exit(1)


hole_app = typer.Typer(
    help="Agda holes: fill one with a candidate (a judgment), or ask about it (no verdict)."
)
app.add_typer(hole_app, name="hole")


@hole_app.command("fill")
@boundary
def hole_fill(
    file: Annotated[Path, typer.Argument(help="The Agda file with the hole (never modified).")],
    line: Annotated[int, typer.Argument(help="1-based line of the hole's opening brace.")],
    column: Annotated[int, typer.Argument(help="1-based column of the hole's opening brace.")],
    candidate: Annotated[str, typer.Argument(help="The term to put in the hole.")],
    stdlib: Annotated[
        bool, typer.Option("--stdlib/--no-stdlib", help="Put agda-stdlib on the include path.")
    ] = True,
) -> None:
    """Judge a candidate in one hole (JSON): solved, progress, type_error, refused, limit or error.

    limit: the check was stopped by a limit (the "limit" field says which: time, memory, ...)
    while a known-good proof fits in the same limits; no finding, but a failed attempt.

    error: assay's or Agda's own failure (a known-good proof fails too), never the candidate's.
    """
    from assay.proofs import cache_for, fill_hole

    with about(file):
        config = Config.from_env()
        result = fill_hole(
            file, line, column, candidate, stdlib=stdlib, cache=cache_for(config), config=config
        )
    _emit(result.to_json())


@hole_app.command("goal")
@boundary
def hole_goal(
    file: Annotated[Path, typer.Argument(help="The Agda file with the hole.")],
    line: Annotated[int, typer.Argument(help="1-based line of the hole's opening brace.")],
    column: Annotated[int, typer.Argument(help="1-based column of the hole's opening brace.")],
    infer: Annotated[
        str | None, typer.Option("--infer", help="Also infer this term's type at the hole.")
    ] = None,
    stdlib: Annotated[
        bool, typer.Option("--stdlib/--no-stdlib", help="Put agda-stdlib on the include path.")
    ] = True,
) -> None:
    """Ask the interaction lane for the goal type and context at a hole (an answer, never a verdict)."""
    from assay.proofs import AgdaLane

    if not file.is_file():
        raise InvalidInput("no such file", where=str(file))
    with AgdaLane(stdlib=stdlib, config=Config.from_env()) as lane:
        answer = lane.goal(file, line, column)
        if infer is not None:
            answer = answer.with_inferred(infer, lane.infer(file, line, column, infer))
    _emit(answer.to_json())


_platform_cmds.register(app)
_serve_cmds.register(app)
_mcp_cmds.register(app)
_review_cmds.register(app)
_review16_cmds.register(app)
_prove_cmds.register(app)
_batch_cmds.register(app)


def main() -> None:
    """Console entry point: never a traceback, whatever happens."""
    try:
        app()
    except AssayError as exc:  # raised outside a command (none is today): the same one line
        sys.exit(report_error(exc))
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        say(f"internal error: {type(exc).__name__}: {exc}")
        sys.exit(1)
