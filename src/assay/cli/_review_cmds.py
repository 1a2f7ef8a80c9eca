"""Review commands: users and groups, open seats, claims, responses, the review record, and
validating a protocol file.

Each is a thin twin of one ``Platform.reviews`` method (``assay.platform._reviews``); ``--as``
names the acting user (default ``$ASSAY_USER``, else the login name), ``--json`` prints the
document.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._errors import InvalidInput
from assay._files import read_regular
from assay.cli._boundary import boundary, say
from assay.cli._platform_cmds import AsOption, JsonOption, _platform, _print, _run_lines, _user

user_app = typer.Typer(help="People who review: users and their groups (stored in the ledger).")
review_app = typer.Typer(
    help="Review seats: list the open ones, claim one, respond, show a review record."
)
protocol_app = typer.Typer(help="Review protocols (YAML graphs of review and reduce nodes).")

MAX_PROTOCOL = 256 * 1024
MAX_RESPONSE = 1024 * 1024
SeatArgument = Annotated[str, typer.Argument(help="A seat id, as 'assay review seats' lists it.")]


def _when(moment: Any) -> str:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else "-"


@user_app.command("add")
@boundary
def user_add(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    group: Annotated[
        list[str] | None, typer.Option("--group", help="A group to add the user to (repeatable).")
    ] = None,
    role: Annotated[
        list[str] | None,
        typer.Option("--role", help="participant, reviewer or manager (repeatable)."),
    ] = None,
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a user, or add groups and roles to one (they accumulate); prints a new bearer token
    for the web pages and the API, once (only its sha256 is stored; it replaces the old one)."""
    if not group and not role:
        raise InvalidInput(
            "give at least one --group or --role (e.g. --group reviewers)", where="--group"
        )
    with _platform() as platform:
        view = platform.reviews.add_user(name, group or [], _user(who), role or [])

    def lines(v: Any) -> list[str]:
        return [
            f"user {v.name}: groups {', '.join(v.groups) or '-'}; roles {', '.join(v.roles) or '-'}",
            f"token (shown once; keep it secret): {v.token}",
        ]

    _print(view, as_json, lines)


@review_app.command("seats")
@boundary
def review_seats(who: AsOption = None, as_json: JsonOption = False) -> None:
    """The open seats you may claim now, and the seats you hold."""
    with _platform() as platform:
        view = platform.reviews.seats(_user(who))

    def lines(v: Any) -> list[str]:
        out = [f"{len(v.open)} open seat(s) for {v.user}"]
        for s in v.open:
            out.append(f"  {s.seat}  ({s.problem}, node {s.node}, deadline {_when(s.deadline)})")
        for s in v.held:
            out.append(f"  held: {s.seat} until {_when(s.until)}")
        return out

    _print(view, as_json, lines)


@review_app.command("claim")
@boundary
def review_claim(seat: SeatArgument, who: AsOption = None, as_json: JsonOption = False) -> None:
    """Claim a seat for its lease; prints the rubric, the response schema and the materials."""
    with _platform() as platform:
        view = platform.reviews.claim(seat, _user(who))

    def lines(v: Any) -> list[str]:
        out = [f"claimed {v.seat} until {_when(v.until)}", f"rubric: {v.rubric}", "materials:"]
        out += [f"  {m.uri}  sha256 {m.sha256}  ({m.what})" for m in v.materials]
        return out

    _print(view, as_json, lines)


@review_app.command("respond")
@boundary
def review_respond(
    seat: SeatArgument,
    file: Annotated[
        Path, typer.Option("--file", help="The response (JSON, with its 'assistance' list).")
    ],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer the seat you hold; an invalid response is refused and the seat stays yours."""
    data = read_regular(file, MAX_RESPONSE, "--file")
    with _platform() as platform:
        view = platform.reviews.respond(seat, _user(who), data)

    def lines(v: Any) -> list[str]:
        out = [f"recorded the response to {v.seat} (sha256 {v.response_sha256})"]
        out += [f"  {s['node']} ({s['op']}): {s['outcome']}: {s['detail']}" for s in v.reductions]
        if v.run is not None:
            out += _run_lines(v.run)
        elif v.concluded is not None:  # a campaign item: concluded, no run
            out.append(f"concluded {v.concluded['outcome']}: {v.concluded['detail']}")
        return out

    _print(view, as_json, lines)


@review_app.command("show")
@boundary
def review_show(
    submission: Annotated[str, typer.Argument(help="The submission id.")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """The whole review record: seats, who judged, what they were shown and answered, and
    every reduction (a node's responses are withheld until it settles)."""
    with _platform() as platform:
        view = platform.reviews.show(submission, _user(who))

    def lines(v: Any) -> list[str]:
        out = [f"submission {v.submission}"]
        for review in v.reviews:
            end = review.concluded
            state = f"{end['status']}: {end['detail']}" if end else "open"
            if end and end.get("revoked"):  # as `assay show` says: it concludes nothing
                state += f" [revoked: {end['revoked']}]"
            out.append(f" run {review.run} stage {review.stage}: {state}")
            for node in review.nodes:
                said = f": {node.outcome} ({node.detail})" if node.outcome else ""
                out.append(f"  {node.name} ({node.type}) {node.status}{said}")
                for s in node.seats:
                    verdict = (s.response or {}).get("verdict", s.withheld or "")
                    out.append(f"    {s.seat} {s.state} {s.user or ''} {verdict}".rstrip())
        return out

    _print(view, as_json, lines)


@review_app.command("material")
@boundary
def review_material(
    seat: SeatArgument,
    uri: Annotated[str, typer.Argument(help="A material URI the seat lists (assay://...).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the bytes here (default: standard output).")
    ] = None,
    who: AsOption = None,
) -> None:
    """The bytes of a material your seat shows (a folder: its manifest)."""
    with _platform() as platform:
        data = platform.reviews.material(seat, uri, _user(who))
    if out is not None:
        out.write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


@protocol_app.command("validate")
@boundary
def protocol_validate(
    file: Annotated[Path, typer.Argument(help="The protocol file (YAML).")],
    as_json: JsonOption = False,
) -> None:
    """Validate a protocol file in full, naming every problem found (exit 2 when any)."""
    from assay.cli._app import _emit
    from assay.review import load_yaml, parse_protocol, protocol_problems

    raw = load_yaml(read_regular(file, MAX_PROTOCOL, str(file)), str(file))
    problems = protocol_problems(raw, str(file))
    if as_json:
        document: dict[str, Any] = {"schema": "assay.protocol_check/1", "valid": not problems}
        document["problems"] = problems
        if not problems:
            protocol = parse_protocol(raw, str(file))
            document["nodes"] = list(protocol.nodes)
            document["final"] = protocol.final
        _emit(document)
    elif not problems:
        protocol = parse_protocol(raw, str(file))
        typer.echo(f"{file}: valid ({len(protocol.nodes)} nodes, final {protocol.final!r})")
    else:
        for line in problems:
            say(line)
    if problems:
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the review commands to ``app``."""
    app.add_typer(user_app, name="user")
    app.add_typer(review_app, name="review")
    app.add_typer(protocol_app, name="protocol")
