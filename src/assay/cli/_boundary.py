"""The one place where an error becomes a message and an exit code.

Every command is wrapped in ``boundary``: an ``AssayError`` from anywhere inside it prints one
line, ``assay: error: <where>: <what>``, and exits with ``assay._errors.exit_code`` (2 for
invalid input, 3 when this machine cannot do it, 1 otherwise). ``main`` catches the rest, so a
traceback never reaches the user whatever the input: an unexpected exception is one line,
``internal error``, exit 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

import typer

from assay._errors import AssayError, InvalidInput, exit_code
from assay.cli._render import terminal_safe

P = ParamSpec("P")
R = TypeVar("R")


def say(message: str) -> None:
    """One line on stderr, terminal escapes and control characters made inert."""
    typer.echo(f"assay: error: {terminal_safe(message)}", err=True)


def report_error(exc: AssayError) -> int:
    """Print ``exc`` as one line (one per defect when it lists several: a problem folder) and
    return its exit code (for a command that goes on)."""
    for line in getattr(exc, "lines", None) or [str(exc)]:
        say(line)
    return exit_code(exc)


def boundary(command: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so an ``AssayError`` ends it with one line and its exit code."""

    @functools.wraps(command)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except AssayError as exc:
            raise typer.Exit(report_error(exc)) from None

    return guarded


@contextmanager
def about(path: Path) -> Iterator[None]:
    """Name ``path`` in an input error that names no place of its own (``no hole at line 3``),
    and make a failure to read it an input error."""
    try:
        yield
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
    except InvalidInput as exc:
        if exc.where is not None:
            raise
        raise InvalidInput(str(exc), where=str(path)) from None
