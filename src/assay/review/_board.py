"""One review stage of one run, derived from its ledger entries at a given moment.

Nothing about a seat is stored as mutable state: a seat is open, claimed (a claim whose lease has
not lapsed) or answered, as the entries and the clock say. So a lapsed claim reopens the seat
without anyone writing anything, and a node past its deadline is seen as such by whoever looks
next, who records the stage's conclusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from assay.ledger import Entry
from assay.review import _records as rr
from assay.review._protocol import Protocol, ReduceNode, ReviewNode, depends, fold
from assay.review._reduce import SKIPPED, reduce

STATUS_OF = {"accept": "verified", "reject": "refuted", "unresolved": "inconclusive"}
"""The stage's status for the final node's outcome."""


def seat_id(submission: str, run: str, stage: str, node: str, index: int) -> str:
    """A seat's id: readable, and enough to find its submission without a search."""
    return f"{submission}/{run}/{stage}/{node}/{index}"


def parse_seat(seat: str) -> tuple[str, str, str, str, int] | None:
    """``(submission, run, stage, node, index)`` of a seat id, or None."""
    parts = seat.split("/")
    if len(parts) != 5 or not (parts[4].isascii() and parts[4].isdigit()):
        return None
    return parts[0], parts[1], parts[2], parts[3], int(parts[4])


@dataclass
class Seat:
    """A seat derived from its entries: open, claimed (until a lease ends) or answered."""

    id: str
    node: str
    index: int
    claim: rr.ClaimedRecord | None = None
    """The latest claim still holding the seat (None when it lapsed or there was none)."""
    response: rr.RespondedRecord | None = None
    answered: datetime | None = None

    @property
    def state(self) -> str:
        """Open, claimed or answered, read from the seat's latest claim and response."""
        if self.response is not None:
            return "answered"
        return "claimed" if self.claim is not None else "open"

    @property
    def user(self) -> str | None:
        """Who holds or answered the seat; None while it is open."""
        if self.response is not None:
            return self.response.user
        return self.claim.user if self.claim is not None else None


@dataclass
class NodeState:
    """A node's state on the board, derived from entries and the clock, never stored."""

    name: str
    status: str = "waiting"
    """review: waiting, open, settled, skipped or expired; reduce: waiting or decided."""
    opened: datetime | None = None
    deadline: datetime | None = None
    decided: datetime | None = None
    """When a review node settled or a reducer decided."""
    seats: list[Seat] = field(default_factory=list)
    outcome: str | None = None
    detail: str | None = None
    recorded: bool = False
    """A reducer's step is in the ledger already."""


class Board:
    """The state of one run's review stage at ``now``."""

    def __init__(
        self,
        protocol: Protocol,
        submission: str,
        run: str,
        stage: str,
        opened: datetime,
        entries: Sequence[Entry],
        now: datetime,
        foregone: rr.ConcludedRecord | None = None,
    ) -> None:
        self.protocol = protocol
        self.foregone = foregone
        """The stage's conclusion known before any reviewer answers (the work it shows was
        withdrawn, or an earlier run's review of the same submission is carried over): no
        seat opens, and whoever looks next records it."""
        self.opened = opened
        self.submission = submission
        self.run = run
        self.stage = stage
        self.now = now
        mine = [
            e
            for e in entries
            if e.kind in rr.KINDS and e.body.get("run") == run and e.body.get("stage") == stage
        ]
        self.concluded: rr.ConcludedRecord | None = None
        self.nodes: dict[str, NodeState] = {}
        claims: dict[str, rr.ClaimedRecord] = {}
        answers: dict[str, tuple[rr.RespondedRecord, datetime]] = {}
        reduced: dict[str, tuple[rr.ReducedRecord, datetime]] = {}
        for entry in mine:
            if entry.kind == rr.CLAIMED:
                claim = rr.ClaimedRecord.model_validate(entry.body)
                claims[claim.seat] = claim
            elif entry.kind == rr.RESPONDED:
                answer = rr.RespondedRecord.model_validate(entry.body)
                answers.setdefault(answer.seat, (answer, entry.at))
            elif entry.kind == rr.REDUCED:
                step = rr.ReducedRecord.model_validate(entry.body)
                reduced.setdefault(step.node, (step, entry.at))
            elif self.concluded is None:
                self.concluded = rr.ConcludedRecord.model_validate(entry.body)
        for name in protocol.order():
            node = protocol.nodes[name]
            if isinstance(node, ReviewNode):
                self.nodes[name] = self._review(name, node, opened, claims, answers)
            else:
                self.nodes[name] = self._reduce(name, node, reduced)

    def with_entries(self, entries: Sequence[Entry]) -> Board:
        """The same stage as it will be once ``entries`` are stored (same clock)."""
        return Board(
            self.protocol,
            self.submission,
            self.run,
            self.stage,
            self.opened,
            entries,
            self.now,
            self.foregone,
        )

    # ------------------------------------------------------------------ derivation

    def _review(
        self,
        name: str,
        node: ReviewNode,
        opened: datetime,
        claims: dict[str, rr.ClaimedRecord],
        answers: dict[str, tuple[rr.RespondedRecord, datetime]],
    ) -> NodeState:
        state = NodeState(name=name)
        start = opened
        for dep in depends(node):
            before = self.nodes[dep]
            if before.status in ("waiting", "open", "expired"):
                return state
            if before.decided is not None:
                start = max(start, before.decided)
        if node.when is not None and self.nodes[node.when.node].outcome != node.when.outcome:
            state.status = "skipped"
            return state
        state.opened = start
        state.deadline = start + timedelta(hours=node.deadline_hours)
        for index in range(1, node.seats + 1):
            sid = seat_id(self.submission, self.run, self.stage, name, index)
            seat = Seat(id=sid, node=name, index=index)
            if sid in answers:
                seat.response, seat.answered = answers[sid]
            elif sid in claims and claims[sid].until > self.now:
                seat.claim = claims[sid]
            state.seats.append(seat)
        times = [s.answered for s in state.seats if s.answered is not None]
        if len(times) == node.seats:
            state.status = "settled"
            state.decided = max(times)
        elif self.now >= state.deadline:
            state.status = "expired"
        else:
            state.status = "open"
        return state

    def _reduce(
        self, name: str, node: ReduceNode, reduced: dict[str, tuple[rr.ReducedRecord, datetime]]
    ) -> NodeState:
        state = NodeState(name=name)
        if name in reduced:
            step, at = reduced[name]
            state.status, state.outcome, state.detail = "decided", step.outcome, step.detail
            state.decided, state.recorded = at, True
            return state
        result = reduce(node, self.responses(node.inputs), self.outcomes(node.inputs))
        if result is not None:
            state.status = "decided"
            state.outcome, state.detail = result
            state.decided = self.now
        return state

    def responses(self, names: Sequence[str]) -> dict[str, list[dict[str, Any]] | None]:
        """The settled review nodes' responses in seat order (None: skipped)."""
        found: dict[str, list[dict[str, Any]] | None] = {}
        for name in names:
            state = self.nodes.get(name)
            if state is None or name not in self.protocol.nodes:
                continue
            if state.status == "skipped":
                found[name] = None
            elif state.status == "settled":
                found[name] = [
                    {
                        **s.response.response,
                        **{k: Decimal(v) for k, v in s.response.written.items()},
                    }
                    for s in state.seats
                    if s.response
                ]
        return found

    def outcomes(self, names: Sequence[str]) -> dict[str, str | None]:
        """The outcome of each named node (None where it has none yet)."""
        return {n: self.nodes[n].outcome for n in names if n in self.nodes}

    # ------------------------------------------------------------------ what to record

    def steps(self) -> list[tuple[str, dict[str, Any]]]:
        """Entries (kind, body) the ledger lacks: reductions decided and not recorded, in
        order, then the stage's conclusion once it is known."""
        if self.concluded is not None:
            return []
        if self.foregone is not None:
            return [(rr.CONCLUDED, self.foregone.to_json())]
        out: list[tuple[str, dict[str, Any]]] = []
        for name, state in self.nodes.items():
            node = self.protocol.nodes[name]
            if isinstance(node, ReduceNode) and state.status == "decided" and not state.recorded:
                inputs: dict[str, Any] = {}
                for dep in node.inputs:
                    before = self.nodes[dep]
                    if before.seats:
                        inputs[dep] = {
                            s.id: s.response.response_sha256 for s in before.seats if s.response
                        }
                    else:
                        inputs[dep] = before.outcome
                body = rr.ReducedRecord(
                    run=self.run,
                    stage=self.stage,
                    node=name,
                    op=node.op,
                    inputs=inputs,
                    outcome=state.outcome or SKIPPED,
                    detail=state.detail or "",
                )
                out.append((rr.REDUCED, body.to_json()))
        conclusion = self.conclusion()
        if conclusion is not None:
            out.append((rr.CONCLUDED, conclusion.to_json()))
        return out

    def conclusion(self) -> rr.ConcludedRecord | None:
        """The stage's outcome once known: the final node's, or inconclusive for a node past
        its deadline."""
        if self.concluded is not None:
            return self.concluded
        if self.foregone is not None:
            return self.foregone
        for name, state in self.nodes.items():
            if state.status == "expired":
                node = self.protocol.review(name)
                done = sum(s.state == "answered" for s in state.seats)
                assert state.deadline is not None
                return rr.ConcludedRecord(
                    run=self.run,
                    stage=self.stage,
                    outcome="unresolved",
                    status="inconclusive",
                    detail=f"node {name!r}: {done} of {node.seats} seats answered by its "
                    f"deadline {state.deadline.isoformat().replace('+00:00', 'Z')}",
                )
        final = self.nodes[self.protocol.final]
        if final.outcome is None:
            return None
        outcome = final.outcome if final.outcome in STATUS_OF else "unresolved"
        return rr.ConcludedRecord(
            run=self.run,
            stage=self.stage,
            outcome=outcome,
            status=STATUS_OF[outcome],
            detail=f"review {outcome} ({final.name}: {final.detail})",
        )

    # ------------------------------------------------------------------ rules

    def seat(self, sid: str) -> Seat | None:
        """The seat with id ``sid``, or None when the board has no such seat."""
        for state in self.nodes.values():
            for seat in state.seats:
                if seat.id == sid:
                    return seat
        return None

    def why_not_claim(
        self, sid: str, user: str, groups: set[str] | None, submitter: str
    ) -> str | None:
        """Why ``user`` may not claim seat ``sid`` now (None: they may)."""
        if self.concluded is not None or self.foregone is not None:
            return "this review has concluded"
        parsed = parse_seat(sid)
        if parsed is None or parsed[3] not in self.protocol.nodes:
            return "no such seat"
        name = parsed[3]
        node = self.protocol.nodes[name]
        if not isinstance(node, ReviewNode):
            return "no such seat"
        state = self.nodes[name]
        if state.status != "open":
            return {
                "waiting": f"node {name!r} has not opened",
                "skipped": f"node {name!r} was not needed (its condition did not hold)",
                "settled": f"node {name!r} has settled",
                "expired": f"node {name!r} is past its deadline",
            }[state.status]
        seat = self.seat(sid)
        if seat is None:
            return "no such seat"
        me = fold(user)  # one person, however the name is cased
        if me == fold(submitter):
            return "the submitter never reviews their own submission"
        if groups is None:
            return f"{user!r} is not a user here (assay user add {user} --group ...)"
        if me in {fold(c) for c in node.conflicts}:
            return f"{user!r} is conflicted for node {name!r} (named in its conflicts)"
        eligible = node.eligible
        if not (
            (eligible.group is not None and eligible.group in groups)
            or (eligible.users is not None and me in {fold(u) for u in eligible.users})
        ):
            who = [f"group {eligible.group!r}"] if eligible.group else []
            who += [f"users {', '.join(eligible.users)}"] if eligible.users else []
            return f"{user!r} is not eligible for node {name!r} (eligible: {' or '.join(who)})"
        for other in state.seats:
            if other.id != sid and other.user is not None and fold(other.user) == me:
                return f"{user!r} already holds seat {other.id} of node {name!r} (one seat per reviewer)"
        for earlier in node.shows.reports_of:
            if any(s.user is not None and fold(s.user) == me for s in self.nodes[earlier].seats):
                return (
                    f"{user!r} sat on {earlier!r}, whose reports node {name!r} reviews "
                    "(nobody reviews their own report)"
                )
        if seat.state == "answered":
            return "the seat is answered"
        if seat.claim is not None and seat.claim.user != user:
            return f"the seat is claimed until {seat.claim.until.isoformat()}"
        if seat.claim is not None:
            return f"you hold this seat until {seat.claim.until.isoformat()}"
        return None

    def why_not_respond(self, sid: str, user: str) -> str | None:
        """Why ``user`` may not answer seat ``sid`` now (None: they may)."""
        if self.concluded is not None or self.foregone is not None:
            return "this review has concluded"
        seat = self.seat(sid)
        if seat is None:
            return "no such seat (or its node has not opened)"
        state = self.nodes[seat.node]
        if state.status == "settled" or seat.state == "answered":
            return f"the seat is answered and node {seat.node!r} takes no more responses"
        if state.status == "expired":
            return f"node {seat.node!r} is past its deadline"
        if seat.claim is None or seat.claim.user != user:
            return (
                "you hold no live claim on this seat (a claim lapses after its lease; claim it "
                "again)"
            )
        return None

    def visible(self, node: str) -> bool:
        """Independence: a node's responses are shown once it settles, before that only to
        their own author, and all once the stage concludes."""
        return self.concluded is not None or self.nodes[node].status == "settled"
