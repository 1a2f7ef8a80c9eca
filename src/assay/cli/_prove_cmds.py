"""``assay prove DIR``: the proof search loop over a folder of Agda obligations.

A thin twin of ``assay.prove.prove_folder``: it opens nothing but the folder, shows a progress
bar on a terminal (stderr), and prints the report (``--json``: the ``assay.prove/1`` document,
whose every field but ``timing`` is byte-for-byte reproducible). Exit 0 whenever a report was
produced, whatever it says; 2 for bad input; 3 when no Agda is installed.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._config import Config
from assay._errors import InvalidInput
from assay.cli._boundary import boundary
from assay.cli._render import terminal_safe


def _lines(report: Any) -> list[str]:
    out = [
        f"solved {report.solved}/{report.total}"
        + (f" (term-mode ceiling {report.ceiling})" if report.ceiling is not None else "")
        + f"; errors {report.errors}; canaries solved {report.canaries_solved}/{report.canaries}",
        "action space: " + "; ".join(report.action_space),
        f"toolchain: {report.toolchain['binary']} ({report.toolchain['version']})",
        f"controls: retrieval {'on' if report.controls.retrieval else 'off'}, exclusion "
        f"{'on' if report.controls.exclusion else 'OFF (labeled control)'}, filter "
        f"{'on' if report.controls.filter else 'off'}, case split "
        f"{'on' if report.controls.case_split else 'off'}; judgments {report.controls.judgments}, "
        f"cut by the filter {report.controls.filtered}",
    ]
    if report.controls.recall is not None:
        recall = report.controls.recall
        out.append(
            f"recall instrument: recall@8 {recall['recall_at_8']}, median rank "
            f"{recall['median_rank']} over {recall['n']}"
        )
    for row in report.obligations:
        proof = "; ".join(_step_text(step) for step in row.proof) if row.proof else row.reason
        tag = " [canary]" if row.canary else ""
        out.append(
            f"  {row.file}{tag}: {row.status} ({row.judgments} judgments, {row.filtered} cut, "
            f"{row.timing.wall_ms / 1000:.1f} s): {proof}"
        )
    return out


def prove(
    folder: Annotated[
        Path, typer.Argument(help="A folder of .agda obligation files (each file's holes).")
    ],
    retrieval: Annotated[
        bool, typer.Option("--retrieval", help="Also propose top-ranked in-scope library lemmas.")
    ] = False,
    no_exclusion: Annotated[
        bool,
        typer.Option(
            "--no-exclusion",
            help="Labeled control: keep each obligation's own original in the retrieval pool.",
        ),
    ] = False,
    no_filter: Annotated[
        bool,
        typer.Option("--no-filter", help="Judge every candidate (no fast-lane type filter)."),
    ] = False,
    case_split: Annotated[
        bool,
        typer.Option(
            "--case-split",
            help="Also split a hole's clause on a variable when no term closes it (one split per "
            "definition), and propose recursive calls at the new holes.",
        ),
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", help="Obligations searched at once.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report.")] = False,
) -> None:
    """Search proofs for every hole of every .agda file in FOLDER; Agda judges every candidate.

    solved: every hole closed and a green batch check of the whole file (the evidence);
    unsolved: the last state is reported; error: assay's machinery failed (counted neither way).
    """
    from assay.cli._app import _emit
    from assay.proofs import Judging, cache_for
    from assay.prove import load, prove_folder
    from assay.sandbox import configured_sandbox

    if no_exclusion and not retrieval:
        raise InvalidInput(
            "is a control of retrieval: give --retrieval too", where="--no-exclusion"
        )
    if jobs < 1 or jobs > 64:
        raise InvalidInput("must be between 1 and 64", where="--jobs")
    config = Config.from_env()
    total = len(load(folder))  # bad input (no folder, no obligations) fails here, before Agda
    judging = Judging(configured_sandbox(config), cache=cache_for(config), config=config)
    show = sys.stderr.isatty()
    lock = threading.Lock()
    with typer.progressbar(
        length=total, label="proving", file=sys.stderr if show else None, hidden=not show
    ) as bar:
        report = prove_folder(
            folder,
            judging,
            retrieval=retrieval,
            exclusion=not no_exclusion,
            filter=not no_filter,
            case_split=case_split,
            jobs=jobs,
            on_done=lambda _row: _step(bar, lock),
        )
    if as_json:
        _emit(report.to_json())
        return
    for line in _lines(report):
        typer.echo(terminal_safe(line))


def _step(bar: Any, lock: threading.Lock) -> None:
    with lock:  # obligations finish on worker threads
        bar.update(1)


def register(app: typer.Typer) -> None:
    """Add ``assay prove`` to ``app``."""
    app.command("prove")(boundary(prove))


def _step_text(step: Any) -> str:
    """A committed step as the summary prints it (a case split names its variable)."""
    return f"split {step.term}" if step.clauses is not None else str(step.term)
