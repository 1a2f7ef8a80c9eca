"""Review beyond a stage: verifier families (``assay verifier show``), standalone review
campaigns (``assay review campaign create|show``) and the protocols-compared report
(``assay review report``).

Thin twins of ``assay.platform._verifiers``, ``assay.platform._campaigns`` and
``assay.review._report``; ``--as`` names the acting user, ``--json`` prints the document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from assay._files import read_regular
from assay.cli._boundary import boundary
from assay.cli._platform_cmds import AsOption, JsonOption, _platform, _print, _user

verifier_app = typer.Typer(help="Verifier families: named families of contract versions.")
campaign_app = typer.Typer(
    help="Review campaigns: a protocol over files or sampled runs, outside any contract."
)
MAX_PROTOCOL = 256 * 1024


@verifier_app.command("show")
@boundary
def verifier_show(
    name: Annotated[str, typer.Argument(help="The verifier's name (a contract's 'verifier:').")],
    as_json: JsonOption = False,
) -> None:
    """Its contract versions, the revisions pinning each, the checker programs that conformed,
    and the revoked ones with reasons (all from the ledger)."""
    from assay.platform import verifier_view

    with _platform() as platform:
        view = verifier_view(platform.ledger, name)

    def lines(v: Any) -> list[str]:
        from assay.platform import when

        out = [f"verifier {v.verifier}: {len(v.versions)} contract version(s)"]
        for version in v.versions:
            out.append(
                f" v{version.version} contract {version.contract} (published {when(version.published)}"
                f"{', problem ' + version.problem if version.problem else ''})"
            )
            for rev in version.revisions:
                out.append(f"   pinned by revision {rev.revision} ({rev.problem})")
            for imp in version.implementations:
                said = "conformed" if imp.conformed else f"did not conform: {imp.detail}"
                out.append(f"   implementation {imp.checker} ({imp.key}): {said}")
        out.append("conformed and not revoked: " + (", ".join(v.conformed) or "none"))
        for rev in v.revoked:
            out.append(f"revoked {rev.checker} by {rev.by} at {when(rev.at)}: {rev.why}")
        return out

    _print(view, as_json, lines)


@campaign_app.command("create")
@boundary
def campaign_create(
    protocol: Annotated[Path, typer.Option("--protocol", help="The protocol file (YAML).")],
    items: Annotated[
        str,
        typer.Option(
            "--items",
            help="A folder (each file is an item) or a runs query "
            "'runs:status=verified,checker=program:,since=2026-11-24T00:00:00Z,problem=P'.",
        ),
    ],
    sample: Annotated[
        int | None, typer.Option("--sample", help="Review N items chosen deterministically.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="The seed the sample is drawn with.")
    ] = None,
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Open a campaign: seats for each item exactly as a review stage opens them."""
    from assay.review import load_yaml, parse_protocol

    raw = load_yaml(read_regular(protocol, MAX_PROTOCOL, "--protocol"), str(protocol))
    parsed = parse_protocol(raw, str(protocol))
    with _platform() as platform:
        view = platform.reviews.campaigns.create(parsed, items, _user(who), sample, seed)
    _print(view, as_json, _campaign_lines)


@campaign_app.command("show")
@boundary
def campaign_show(
    campaign: Annotated[str, typer.Argument(help="The campaign id (cmp-...).")],
    who: AsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Each item's decision (and a ranking campaign's order), with the full review record."""
    with _platform() as platform:
        view = platform.reviews.campaigns.show(campaign, _user(who))
    _print(view, as_json, _campaign_lines)


def _campaign_lines(v: Any) -> list[str]:
    chosen = f"sample {v.sample} (seed {v.seed}) of " if v.sample is not None else ""
    out = [
        f"campaign {v.campaign}: {v.title or 'untitled protocol'} (protocol {v.protocol_id[:12]})",
        f" items: {chosen}{v.candidates} from {v.source}",
    ]
    for item in v.items:
        auto = f" [automated: {item.automated}]" if item.automated else ""
        said = f"{item.decision}: {item.detail}" if item.decision else "open"
        out.append(f"  {item.item} {item.label}{auto}: {said}")
        for node in item.review.nodes:
            for s in node.seats:
                if s.state != "answered" or item.decision is None:
                    out.append(f"    seat {s.seat} {s.state} {s.user or ''}".rstrip())
    if v.order is not None:
        out.append(f" order ({v.order_rule}):")
        out += [
            f"  {o.rank}. {o.label} ({o.item}) {o.aggregate} {o.score:g} of {o.scores}"
            for o in v.order
        ]
    return out


@boundary
def review_report(
    protocol: Annotated[
        list[str] | None,
        typer.Option(
            "--protocol", help="A protocol id (6+ characters) or title to report (repeatable)."
        ),
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            help="The protocol whose decisions are the reference (an expert protocol, an audit).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Protocols compared from the ledger alone: agreement (raw, Cohen's/Fleiss' kappa),
    decisions matching a reference, automated checks vs audits, decisions per reviewer-hour
    by declared assistance; a 95 % interval on every rate."""
    from assay.cli._app import _emit
    from assay.platform import review_report as compute

    with _platform() as platform:
        view = compute(platform.reviews, protocol or [], reference)
    if as_json:
        _emit(view.to_json())
        return
    _report_tables(view)


def _rate(rate: Any) -> str:
    return "-" if rate is None else str(rate.text(2))


def _report_tables(view: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from assay.cli._render import terminal_safe

    console = Console(highlight=False)
    titles = {p.protocol: p.title or "untitled" for p in view.protocols}
    ref = f"{view.reference[:12]} ({titles.get(view.reference, '')})" if view.reference else "none"
    decisions = Table(title=f"Review protocols (reference: {ref})")
    for column in (
        "protocol",
        "title",
        "units",
        "outcomes",
        "matches reference",
        "audit vs automated",
    ):
        decisions.add_column(column)
    agreement = Table(title="Agreement between a node's reviewers")
    for column in ("protocol", "node", "seats", "items", "raw agreement", "kappa [95 %]"):
        agreement.add_column(column)
    speed = Table(title="Decisions per reviewer-hour, by declared assistance")
    for column in ("protocol", "assistance", "reviewers", "per hour [95 %]", "agrees w/ decision"):
        speed.add_column(column)
    for p in view.protocols:
        name = p.protocol[:12]
        outcomes = ", ".join(f"{k} {v}" for k, v in p.outcomes.items()) or "-"
        decisions.add_row(
            name,
            terminal_safe(p.title or "-"),
            f"{p.concluded}/{p.units}",
            outcomes,
            _rate(p.matches_reference),
            _rate(p.automated_disagreement),
        )
        for a in p.agreement:
            said = "-" if a.kappa is None else a.kappa.text(2)
            agreement.add_row(name, a.node, str(a.seats), str(a.items), _rate(a.raw), said)
        for t in p.throughput:
            d = t.decisions
            per = "-" if d.rate is None else f"{d.rate:.1f} [{d.low:.1f}, {d.high:.1f}]"
            speed.add_row(
                name,
                terminal_safe(t.assistance),
                str(t.reviewers),
                f"{per} ({d.count} in {d.hours:.2f} h)",
                _rate(t.agrees_with_decision),
            )
    for table in (decisions, agreement, speed):
        console.print(table)
    for note in view.notes:
        console.print(f"note: {note}")


def register(app: typer.Typer) -> None:
    """Add ``assay verifier``; campaigns and the report join ``assay review``."""
    from assay.cli._review_cmds import review_app

    app.add_typer(verifier_app, name="verifier")
    review_app.add_typer(campaign_app, name="campaign")
    review_app.command("report")(review_report)
