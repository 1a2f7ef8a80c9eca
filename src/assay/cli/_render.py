"""What people see: rich tables for reports and kinds, the generated kinds reference, and the
``assay kinds --json`` document."""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import Field
from pydantic.fields import FieldInfo
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from assay._wire import WireModel
from assay.checks import Kind
from assay.sandbox import FixtureResult
from assay.status import Report, Status, clean_text

_STYLE = {
    Status.VERIFIED: "green",
    Status.REFUTED: "red",
    Status.INCONCLUSIVE: "yellow",
    Status.ERROR: "magenta",
}


# Terminal control sequences: CSI (7-bit and 8-bit), OSC/DCS/SOS/PM/APC strings (up to their
# terminator, or the end of the text when unterminated), and two-character ESC sequences.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
# What is left that a terminal acts on: C0 controls but tab and newline, DEL, C1 controls, and
# the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _console() -> Console:
    """A console that can print every character: on a stream whose encoding cannot hold one
    (a POSIX locale), it is written as a backslash escape instead of raising, so the status shown
    is always the status computed (an encoding error must not turn a report into ``error``)."""
    stream = sys.stdout
    if (
        isinstance(stream, io.TextIOWrapper)
        and not stream.encoding.lower().replace("-", "").startswith("utf")
        and stream.errors in ("strict", "surrogateescape")
    ):
        stream.reconfigure(errors="backslashreplace")
    return Console()


def terminal_safe(text: str) -> str:
    """``text`` as it may be shown in a terminal: escape sequences removed, any other control
    character (``\\r``, backspace, bidi overrides) shown as U+FFFD, so text the candidate or a
    checker wrote can neither restyle the screen nor overwrite or hide what assay printed. Lone
    surrogates become U+FFFD too, so the text can always be written out."""
    text = clean_text(text)
    if text.isprintable() or all(c.isprintable() or c in "\n\t" for c in text):
        return text
    return _CONTROLS.sub("\ufffd", _ESCAPES.sub("", text.replace("\r\n", "\n")))


def print_report(title: str, report: Report) -> None:
    """The ``--human`` table of one report; every text the work supplied is made terminal-safe first."""
    table = Table(title=escape(terminal_safe(title)), show_lines=False, expand=False)
    table.add_column("kind")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for outcome in report.outcomes:
        style = _STYLE[outcome.status]
        # Text, not markup: nothing in a detail is read as rich markup or emoji codes.
        table.add_row(
            Text(outcome.kind or ""),
            f"[{style}]{outcome.status.label}[/]",
            Text(terminal_safe(outcome.detail)),
        )
    console = _console()
    console.print(table)
    score = "none (masked)" if report.score is None else f"{report.score:g}"
    console.print(f"[bold {_STYLE[report.status]}]{report.status.label}[/]  score: {score}\n")


def fields_of(kind: Kind) -> list[tuple[str, str, str, str]]:
    """(name, type, default or 'required', description) for each spec field, own fields first."""
    rows = []
    for name, info in kind.spec.model_fields.items():
        rows.append(
            (info.alias or name, _describe_type(info), _default(info), info.description or "")
        )
    common = {"weight", "description"}
    return [r for r in rows if r[0] not in common] + [r for r in rows if r[0] in common]


def _describe_type(info: FieldInfo) -> str:
    return _type_text(info.annotation)


def _type_text(annotation: Any) -> str:
    """``int | float``, ``list[text]``, ``"a" | "b"``: a type as an author writes JSON for it."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        inner = _type_text(args[0])
        return "text" if inner == "str" else inner
    if origin in (Union, UnionType):
        return " | ".join(_type_text(a) for a in args)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_text(a) for a in args)}]"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any JSON"
    return getattr(annotation, "__name__", str(annotation))


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    return repr(info.default)


class KindEntry(WireModel):
    """One check kind as ``assay kinds --json`` lists it."""

    kind: str
    """The name a check spec gives in its ``kind`` field."""
    summary: str
    """What a pass establishes (the first paragraph of the kind's docstring)."""
    spec: dict[str, Any]
    """The JSON Schema of the kind's spec (its fields, types and defaults)."""


class KindList(WireModel):
    """Every registered check kind: the document ``assay.kinds/1``."""

    schema_: Literal["assay.kinds/1"] = Field("assay.kinds/1", alias="schema")
    kinds: list[KindEntry]
    """In registry order."""


def kinds_document(kinds: list[Kind]) -> KindList:
    """The registry as ``assay kinds --json`` prints it, generated so it cannot drift."""
    return KindList(
        kinds=[
            KindEntry(kind=k.name, summary=k.summary, spec=k.spec.model_json_schema())
            for k in kinds
        ]
    )


def print_kinds(kinds: list[Kind]) -> None:
    """The ``assay kinds`` table: each kind's fields and what a pass means."""
    table = Table(title="check kinds", show_lines=True)
    table.add_column("kind", style="bold")
    table.add_column("fields")
    table.add_column("what a pass means", overflow="fold")
    for kind in kinds:
        fields = "\n".join(
            f"{name}{'' if default == 'required' else '?'}: {type_}"
            for name, type_, default, _ in fields_of(kind)
            if name not in ("weight", "description")
        )
        # Escaped: "list[text]" is a type here, not rich markup.
        table.add_row(kind.name, escape(fields), escape(kind.summary.replace("``", "`")))
    _console().print(table)
    _console().print("Every kind also accepts weight? (> 0, default 1) and description?.")


def kinds_markdown(kinds: list[Kind]) -> str:
    """docs/kinds.md, generated from the registry so the reference cannot drift from the code."""
    lines = [
        "# Check kinds",
        "",
        "Generated by `assay kinds --markdown` from the registry; do not edit by hand.",
        "",
    ]
    for kind in kinds:
        lines += [
            f"## `{kind.name}`",
            "",
            kind.doc,
            "",
            "| field | type | default | meaning |",
            "|---|---|---|---|",
        ]
        for name, type_, default, description in fields_of(kind):
            meaning = " ".join(description.split()).replace("|", "\\|")
            lines.append(f"| `{name}` | `{type_}` | {default} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def print_conformance(results: Sequence[FixtureResult]) -> None:
    """The ``checker conform --human`` table: each fixture, what was expected and what the checker said."""
    table = Table(title="checker conformance")
    for column in ("fixture", "expected", "got", "", "detail"):
        table.add_column(column, overflow="fold")
    for r in results:
        mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
        table.add_row(
            Text(terminal_safe(r.name)),
            Text(r.expected),
            Text(terminal_safe(r.got)),
            mark,
            Text(terminal_safe(r.detail)),
        )
    console = _console()
    console.print(table)
    passed = sum(r.passed for r in results)
    console.print(f"{passed}/{len(results)} fixtures reproduced")
