"""The review report's input, read from the ledger alone: every review stage of every run and
every campaign item becomes one ``assay.review.Unit`` (its protocol by id, what it judged, each
response with its claim-to-response time and declared assistance, the outcome, and for an
audited run the automated status), which ``assay.review.report`` then compares.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from assay._errors import InvalidInput
from assay.ledger import Entry
from assay.platform import _records as r
from assay.platform._campaigns import STAGE, is_campaign_item, protocol_id, revoked_runs
from assay.review import Answer, Protocol, ReviewNode, ReviewReport, Unit, parse_seat, report
from assay.review import records as rr

if TYPE_CHECKING:
    from assay.platform._reviews import Reviews


def units(reviews: Reviews) -> list[Unit]:
    """Every reviewed unit in the ledger, in chain order. A review stage whose checker
    (``review:<contract>/<stage>``) was revoked decides nothing (its outcome is left out, as
    the run no longer counts it), and an audited run that no longer counts (a checker it used
    was revoked) has no automated verdict to disagree with."""
    grouped: dict[tuple[str, str, str], list[Entry]] = defaultdict(list)
    for entry in reviews.p.ledger.find(kind=rr.KINDS):
        key = (entry.subject, entry.body["run"], entry.body["stage"])
        grouped[key].append(entry)
    found = []
    gone: set[str] | None = None
    for (subject, run, stage), entries in grouped.items():
        automated = None
        revoked = False
        if is_campaign_item(subject) and stage == STAGE:
            record, protocol, _ = reviews.campaigns.record(run)
            item = next(i for i in record.items if i.item == subject)
            target, automated = item.target, item.automated
            if item.run is not None:
                gone = _revoked(reviews) if gone is None else gone
                automated = None if item.run in gone else automated
        else:
            history = reviews.p._history(subject)
            _, _, protocol = reviews._stage(history.submission, stage)
            target = subject
            revoked = reviews._revoked(history, stage) is not None
        unit = _unit(protocol, target, f"{subject}/{run}/{stage}", entries, automated)
        if revoked:
            unit.outcome = None
        found.append(unit)
    return found


def _revoked(reviews: Reviews) -> set[str]:
    """Every run that no longer counts (read once per report)."""
    used: dict[str, list[str]] = defaultdict(list)
    for entry in reviews.p.ledger.find(kind=r.STAGE):
        used[entry.body["run"]].extend(entry.body["checkers"])
    return revoked_runs(reviews.p.ledger.find, None, used)


def _unit(
    protocol: Protocol, target: str, key: str, entries: list[Entry], automated: str | None
) -> Unit:
    seats = {
        name: node.seats for name, node in protocol.nodes.items() if isinstance(node, ReviewNode)
    }
    unit = Unit(
        protocol=protocol_id(protocol),
        title=protocol.title,
        target=target,
        key=key,
        seats=seats,
        automated=automated,
    )
    claims: dict[tuple[str, str], Entry] = {}
    for entry in entries:
        if entry.kind == rr.CLAIMED:
            claims[(entry.body["seat"], entry.body["user"])] = entry
        elif entry.kind == rr.RESPONDED:
            body = entry.body
            claim = claims.get((body["seat"], body["user"]))
            seconds = (entry.at - claim.at).total_seconds() if claim is not None else None
            parsed = parse_seat(body["seat"])
            verdict = body["response"].get("verdict")
            unit.answers.append(
                Answer(
                    node=body["node"],
                    seat=parsed[4] if parsed else 0,
                    user=body["user"],
                    verdict=verdict if isinstance(verdict, str) else None,
                    agents=tuple(sorted({a["agent"] for a in body.get("assistance", [])})),
                    seconds=seconds,
                )
            )
        elif entry.kind == rr.CONCLUDED and unit.outcome is None:
            unit.outcome = entry.body["outcome"]
    return unit


def resolve(given: str, found: list[Unit], where: str) -> str:
    """A protocol named by its id (or a prefix of at least 6 characters) or its exact title."""
    ids = {u.protocol: u.title for u in found}
    matches = {
        pid
        for pid, title in ids.items()
        if (len(given) >= 6 and pid.startswith(given)) or title == given
    }
    if len(matches) != 1:
        known = ", ".join(f"{pid[:12]} ({title or 'untitled'})" for pid, title in ids.items())
        said = "matches several protocols" if matches else "names no reviewed protocol"
        raise InvalidInput(f"{given!r} {said} (reviewed: {known or 'none'})", where=where)
    return matches.pop()


def review_report(
    reviews: Reviews, protocols: list[str], reference: str | None = None
) -> ReviewReport:
    """The report over the ledger, for the protocols named (every one when none is)."""
    found = units(reviews)
    chosen = {resolve(p, found, "--protocol") for p in protocols}
    ref = resolve(reference, found, "--reference") if reference is not None else None
    if chosen:
        found = [u for u in found if u.protocol in chosen or u.protocol == ref]
    result = report(found, ref)
    if chosen:
        kept = [p for p in result.protocols if p.protocol in chosen or p.protocol == ref]
        result = result.model_copy(update={"protocols": kept})
    return result
