"""Protocols compared from their records: the review report.

Input: every reviewed unit (one review stage of one run, or one campaign item) as the ledger
records it: its protocol, what it judged (the target: a submission, or a file by hash), each
review node's responses (who, verdict, declared assistance, seconds from claim to response), the
final outcome and, for an audited run, what the automated checker had concluded. Output, per
protocol: raw agreement between a node's reviewers (always) and Cohen's kappa (2 seats) or
Fleiss' kappa (3 or more), how often its decision matches a reference protocol's on the same
targets, how often an audit disagrees with the automated checker, and decisions per
reviewer-hour split by declared assistance, each rate with its 95 % interval
(``assay.review._stats``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from assay._wire import WireModel
from assay.review._stats import Kappa, PerHour, Rate, cohen, fleiss, per_hour, wilson

AGREES = {"pass": "accept", "fail": "reject"}
"""A reviewer's verdict that agrees with a decision."""


@dataclass(frozen=True)
class Answer:
    """One recorded response, as the report reads it."""

    node: str
    seat: int
    user: str
    verdict: str | None
    agents: tuple[str, ...]
    """The agents the reviewer declared (empty: unassisted)."""
    seconds: float | None
    """From the reviewer's claim of the seat to their response."""


@dataclass
class Unit:
    """One reviewed unit: a stage of a run, or a campaign item."""

    protocol: str
    title: str | None
    target: str
    key: str
    seats: dict[str, int]
    """Review node -> its number of seats."""
    outcome: str | None = None
    automated: str | None = None
    answers: list[Answer] = field(default_factory=list)


class NodeAgreement(WireModel):
    """How a review node's reviewers agreed: raw agreement and kappa, with intervals."""

    node: str
    seats: int
    items: int
    """Items whose node every seat answered with a verdict."""
    raw: Rate
    """Agreeing pairs of reviewers among all pairs (pairs within an item are not independent:
    the interval is indicative)."""
    kappa: Kappa | None


class Throughput(WireModel):
    """Decisions per reviewer-hour (claim to response) for one kind of declared assistance."""

    assistance: str
    """"unassisted", or the declared agents (e.g. "assisted: claude")."""
    reviewers: int
    decisions: PerHour
    agrees_with_decision: Rate
    """Responses whose verdict agrees with the unit's final decision (accept/reject units)."""


class ProtocolReport(WireModel):
    """One protocol's figures in `assay review report`, each rate with its interval."""

    protocol: str
    title: str | None
    units: int
    concluded: int
    outcomes: dict[str, int]
    agreement: list[NodeAgreement]
    matches_reference: Rate | None
    """Targets both this protocol and the reference decided, deciding the same outcome."""
    automated_disagreement: Rate | None
    """Audited runs (accept/reject) whose audit disagrees with the automated status."""
    throughput: list[Throughput]


class ReviewReport(WireModel):
    """The report over the ledger's review records."""

    schema_: Literal["assay.review_report/1"] = Field("assay.review_report/1", alias="schema")
    reference: str | None
    protocols: list[ProtocolReport]
    notes: list[str]


NOTES = [
    "every interval is 95 %: proportions Wilson, decisions per hour exact Poisson, Cohen's "
    "kappa asymptotic, Fleiss' kappa a seeded bootstrap over items",
    "reviewer-hours run from a claim to its response; a lapsed claim counts no time, nor does "
    "a response the clock stamped before its claim",
    "decisions match when both protocols concluded on the target with the same outcome "
    "(accept, reject or unresolved); a target the reference decided two ways is left out",
    "automated disagreement: an audited run verified but the audit rejected it, or refuted "
    "but accepted (unresolved audits, and runs whose checker was revoked, are left out)",
    "a review whose checker was revoked decides nothing: its outcome is not counted",
]


def report(units: Sequence[Unit], reference: str | None = None) -> ReviewReport:
    """The report over ``units``, comparing each protocol with ``reference`` (a protocol id)."""
    by_protocol: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        by_protocol[unit.protocol].append(unit)
    # the reference's decision on each target; a target it decided two ways (the same
    # protocol run again on the same work, by anyone who may open a campaign) has none, so a
    # later run can take a target out of the comparison but never flip it
    decided: dict[str, set[str]] = defaultdict(set)
    for unit in by_protocol.get(reference or "", []):
        if unit.outcome is not None:
            decided[unit.target].add(unit.outcome)
    reference_outcomes = {t: next(iter(o)) for t, o in decided.items() if len(o) == 1}
    protocols = []
    for pid, found in by_protocol.items():
        protocols.append(_one(pid, found, reference, reference_outcomes))
    return ReviewReport(reference=reference, protocols=protocols, notes=NOTES)


def _one(
    pid: str, units: list[Unit], reference: str | None, reference_outcomes: dict[str, str]
) -> ProtocolReport:
    outcomes: dict[str, int] = defaultdict(int)
    for unit in units:
        if unit.outcome is not None:
            outcomes[unit.outcome] += 1
    match = None
    if reference is not None and pid != reference:
        both = [u for u in units if u.outcome is not None and u.target in reference_outcomes]
        same = sum(u.outcome == reference_outcomes[u.target] for u in both)
        match = wilson(same, len(both))
    audited = [u for u in units if u.automated is not None and u.outcome in AGREES.values()]
    automated = None
    if any(u.automated is not None for u in units):
        disagree = sum(
            (u.automated == "verified" and u.outcome == "reject")
            or (u.automated == "refuted" and u.outcome == "accept")
            for u in audited
        )
        automated = wilson(disagree, len(audited))
    return ProtocolReport(
        protocol=pid,
        title=units[0].title,
        units=len(units),
        concluded=sum(outcomes.values()),
        outcomes=dict(sorted(outcomes.items())),
        agreement=_agreement(units),
        matches_reference=match,
        automated_disagreement=automated,
        throughput=_throughput(units),
    )


def _agreement(units: list[Unit]) -> list[NodeAgreement]:
    found = []
    for node, seats in units[0].seats.items():
        if seats < 2:
            continue
        rows = []
        for unit in units:
            verdicts = {a.seat: a.verdict for a in unit.answers if a.node == node}
            if len(verdicts) == seats and all(v is not None for v in verdicts.values()):
                rows.append([str(verdicts[s]) for s in sorted(verdicts)])
        if not rows:
            continue
        pairs = agreeing = 0
        for row in rows:
            for i in range(len(row)):
                for j in range(i + 1, len(row)):
                    pairs += 1
                    agreeing += row[i] == row[j]
        kappa = cohen([(r[0], r[1]) for r in rows]) if seats == 2 else fleiss(rows)
        found.append(
            NodeAgreement(
                node=node, seats=seats, items=len(rows), raw=wilson(agreeing, pairs), kappa=kappa
            )
        )
    return found


def _throughput(units: list[Unit]) -> list[Throughput]:
    groups: dict[str, list[tuple[Answer, str | None]]] = defaultdict(list)
    for unit in units:
        for answer in unit.answers:
            name = "assisted: " + ", ".join(answer.agents) if answer.agents else "unassisted"
            groups[name].append((answer, unit.outcome))
    found = []
    for name, answers in sorted(groups.items()):
        # a response stamped before its claim (a clock set back between them) spent no
        # measurable time: it is left out, never subtracted from the others' hours
        timed = [a for a, _ in answers if a.seconds is not None and a.seconds >= 0]
        hours = sum(a.seconds or 0.0 for a in timed) / 3600
        decided = [(a, o) for a, o in answers if o in AGREES.values() and a.verdict is not None]
        agree = sum(AGREES.get(a.verdict or "") == o for a, o in decided)
        found.append(
            Throughput(
                assistance=name,
                reviewers=len({a.user for a, _ in answers}),
                decisions=per_hour(len(timed), hours),
                agrees_with_decision=wilson(agree, len(decided)),
            )
        )
    return found
