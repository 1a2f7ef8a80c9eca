"""``assay batch``: judge a JSON Lines file of items on a local pool or on Ray.

A thin twin of ``assay.executors.run_batch``: it builds the executor, shows a progress bar when
stderr is a terminal, and prints the summary line. Exit 0 when every line was answered (whatever
the verdicts), 2 for unusable input, 1 when assay's machinery failed. Ray is imported only for
``--executor ray``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._config import Config
from assay._errors import InvalidInput
from assay.cli._boundary import boundary


class _Bar:
    """A rich bar (count, rate, ETA) on stderr; ``advance`` is called once per result."""

    def __init__(self, progress: Any, total: int) -> None:
        self.progress, self.total, self.count = progress, total, 0
        self.task = progress.add_task("judging", total=total, rate="")

    def resumed(self, count: int) -> None:
        self.count = count
        self.progress.reset(self.task, total=self.total, completed=count, rate="")

    def advance(self, _: Any) -> None:
        self.count += 1
        if self.count % 64 == 0 or self.count == self.total:  # cheap at thousands a second
            speed = self.progress.tasks[0].speed
            rate = f"{speed:,.0f} items/s" if speed else ""
            self.progress.update(self.task, completed=self.count, rate=rate)


@contextmanager
def _progress(episodes: Path, to_stdout: bool) -> Iterator[_Bar | None]:
    """A bar when stderr is a terminal, and the results do not go to that terminal too (the bar
    would garble them); None otherwise: a pipe or a log gets the summary line only."""
    if not sys.stderr.isatty() or (to_stdout and sys.stdout.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from assay.executors import count_items

    columns = (
        TextColumn("[bold]assay batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    console = Console(stderr=True)
    # Results go to stdout untouched: rich must not route it through the bar.
    with Progress(
        *columns, console=console, redirect_stdout=False, redirect_stderr=False
    ) as progress:
        bar = _Bar(progress, count_items(episodes))
        yield bar
        progress.update(bar.task, completed=bar.count)


def batch(
    episodes: Annotated[
        Path, typer.Argument(help="JSON Lines: one item per line (id, checks or task, answer...).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write results here (resumes: ids already answered are skipped)."
        ),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", min=1, help="Worker processes (default: one per core).")
    ] = None,
    executor: Annotated[
        str, typer.Option("--executor", help="Where items are judged: local or ray.")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="A Ray cluster (default: a local instance)."),
    ] = None,
    workspace_root: Annotated[
        Path | None,
        typer.Option(
            "--workspace-root",
            help="Items' paths resolve under this folder (default: the episodes file's folder).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            help="Seconds one item may take before its worker is killed (default 900).",
        ),
    ] = None,
) -> None:
    """Judge every line of EPISODES (JSON Lines); print one result per line, in input order.

    Paths in items (workspaces, verifier files) resolve under the episodes file's folder, or
    under --workspace-root. A rerun with the same --out judges only the lines not yet answered.
    """
    from assay.executors import (
        DEFAULT_TIMEOUT,
        EXECUTORS,
        check_paths,
        make_executor,
        resolve_root,
        run_batch,
    )

    if executor not in EXECUTORS:
        raise InvalidInput(
            f"{executor!r}: choose one of {', '.join(EXECUTORS)}", where="--executor"
        )
    check_paths(episodes, out)
    root = resolve_root(episodes, workspace_root)
    config = Config.from_env()
    budget = DEFAULT_TIMEOUT if timeout is None else timeout
    with (
        make_executor(
            executor, root=root, config=config, jobs=jobs, timeout=budget, address=ray_address
        ) as pool,
        _progress(episodes, to_stdout=out is None) as bar,
    ):
        summary = run_batch(
            episodes,
            pool,
            out=out,
            stream=None if out else sys.stdout,
            progress=bar.advance if bar else None,
            resumed=bar.resumed if bar else None,
        )
    typer.echo(summary.line(), err=True)


def register(app: typer.Typer) -> None:
    """Add ``assay batch`` to the CLI."""
    app.command("batch")(boundary(batch))
