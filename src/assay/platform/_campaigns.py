"""Standalone review campaigns: a review protocol run over a set of items that are not
submissions under a contract (files to triage or rank, or a deterministic sample of the runs an
automated checker concluded, to audit it).

A campaign is one ledger entry (``campaign.created``: the protocol, the items with the
materials each shows, the query and seed that chose them); each item is then reviewed with the
review stage's own machinery: the same ``Board`` (seats, leases, deadlines, independence,
conflicts, eligibility), the same response check and the same reducers, recorded as the same
``review.*`` entries with the item as their subject, the campaign as their run and ``campaign``
as their stage. Seats are ``ITEM/CAMPAIGN/campaign/NODE/N``, so reviewers use the same
``assay review seats|claim|respond`` commands; nothing here decides anything a review stage
would decide differently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from assay._errors import InvalidInput
from assay._signed import canonical_digest, canonical_json
from assay._wire import WireModel
from assay.ledger import BlobMissing, Entry, LedgerError, NewEntry, Reader
from assay.platform import _records as r
from assay.platform._reviews import (
    ClaimView,
    SeatView,
    StageReview,
    report_materials,
    seat_claim,
    seat_response,
    stage_review,
)
from assay.review import (
    Board,
    Material,
    Protocol,
    ReduceNode,
    ReviewNode,
    aggregate_of,
    fold,
    parse_seat,
)
from assay.review import records as rr

if TYPE_CHECKING:
    from assay.platform._reviews import Reviews

CAMPAIGN = "campaign.created"
STAGE = "campaign"
"""The stage name of every campaign item's review (its run is the campaign id)."""
PREFIX = "cmp-"
MAX_ITEMS = 10_000
"""A campaign is read whole to show it; a larger set is sampled (``--sample``)."""
RUN_FILTERS = ("problem", "status", "checker", "since", "until")
STATUSES = ("verified", "refuted", "inconclusive", "error", "any")
_TRIES = 64


def is_campaign_item(subject: str) -> bool:
    """Whether a seat's first part names a campaign item (``cmp-<hex>.<n>``)."""
    return subject.startswith(PREFIX)


class ItemRecord(WireModel):
    """One item of a campaign: what it is, what reviewers are shown of it, and for a run what
    the automated process concluded (the audit compares with it)."""

    item: str
    label: str
    """The file name, or the run id."""
    target: str
    """What is judged, across protocols: a run's submission id, or a file's sha256."""
    materials: list[Material] = Field(default_factory=list)
    """A file item's bytes (a run item's materials are its submission's, as a stage shows)."""
    run: str | None = None
    submission: str | None = None
    problem: str | None = None
    participant: str | None = None
    automated: str | None = None
    """The run's final status (verified, refuted, ...) as the checker concluded it."""


class CampaignRecord(WireModel):
    """A campaign: the protocol, who opened it, how its items were chosen, the items."""

    campaign: str
    title: str | None
    protocol: dict[str, Any]
    protocol_id: str
    """sha256 of the parsed protocol's canonical JSON: the same graph has the same id in a
    stage and in a campaign, so the report can compare them."""
    by: str
    source: str
    """The --items given: a folder name or a runs query."""
    candidates: int
    sample: int | None
    seed: int | None
    items: list[ItemRecord]


class RankedItem(WireModel):
    """One item's place in a ranking campaign's order (the reducer's aggregate of its scores,
    computed exactly; ties by place)."""

    rank: int
    item: str
    label: str
    score: float
    """The score reducer's aggregate (``aggregate``: mean, min or max) of the item's scores."""
    aggregate: str
    scores: int


class CampaignItemView(WireModel):
    """One campaign item as `campaign show` prints it: what it points at and its decision."""

    item: str
    label: str
    target: str
    automated: str | None
    decision: str | None
    """accept, reject or unresolved once the item's review concluded (None: still open)."""
    status: str | None
    detail: str | None
    review: StageReview


class CampaignView(WireModel):
    """A campaign and each item's decision, with the whole review record."""

    schema_: Literal["assay.campaign/1"] = Field("assay.campaign/1", alias="schema")
    campaign: str
    title: str | None
    protocol_id: str
    by: str
    created: datetime
    source: str
    candidates: int
    sample: int | None
    seed: int | None
    items: list[CampaignItemView]
    order: list[RankedItem] | None = None
    order_rule: str | None = None


def protocol_id(protocol: Protocol) -> str:
    """The protocol's identity for comparisons (its parsed graph's canonical digest)."""
    return canonical_digest(protocol.to_json())


def sample(candidates: list[str], n: int | None, seed: int | None) -> list[str]:
    """Deterministic sampling: candidates ordered by sha256("<seed>:<id>"), the first ``n``
    kept, then put back in their own order. The same candidates, ``n`` and seed always give
    the same sample, on any machine and Python version."""
    if n is None:
        return list(candidates)
    key = {c: hashlib.sha256(f"{seed or 0}:{c}".encode()).hexdigest() for c in candidates}
    chosen = set(sorted(candidates, key=lambda c: key[c])[:n])
    return [c for c in candidates if c in chosen]


@dataclass(frozen=True)
class RunsQuery:
    """``runs:KEY=VALUE,...``: runs whose final status is ``status`` (default verified;
    ``any``: every finished run),
    optionally of one ``problem``, concluded by a checker whose id starts with ``checker``
    (``program:``, ``assay:python@``, a full id ...), finished in ``[since, until)``."""

    problem: str | None = None
    status: str = "verified"
    checker: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def parse_runs_query(text: str) -> RunsQuery:
    """The query, or InvalidInput naming --items and the bad part."""
    body = text.removeprefix("runs:")
    fields: dict[str, Any] = {}
    for part in filter(None, body.split(",")):
        key, eq, value = part.partition("=")
        if not eq or key not in RUN_FILTERS or not value:
            raise InvalidInput(
                f"{part!r}: a runs query is runs:KEY=VALUE,... with keys {', '.join(RUN_FILTERS)}",
                where="--items",
            )
        if key in ("since", "until"):
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise InvalidInput(
                    f"{key}={value!r} is not an ISO 8601 moment", where="--items"
                ) from None
            if moment.tzinfo is None:
                raise InvalidInput(f"{key}={value!r}: give a timezone (e.g. Z)", where="--items")
            fields[key] = moment
        elif key == "status" and value not in STATUSES:
            raise InvalidInput(
                f"status={value!r} is not one of {', '.join(STATUSES)}", where="--items"
            )
        else:
            fields[key] = value
    return RunsQuery(**fields)


class Campaigns:
    """The campaign side of one platform's reviews."""

    def __init__(self, reviews: Reviews) -> None:
        self.reviews = reviews
        self.p = reviews.p
        self._records: dict[str, tuple[CampaignRecord, Protocol, datetime]] = {}

    # ------------------------------------------------------------------ creating

    def create(
        self,
        protocol: Protocol,
        items: str,
        by: str,
        n: int | None = None,
        seed: int | None = None,
        source: str | None = None,
    ) -> CampaignView:
        """Open a campaign over a folder's files or a runs query (sampled when ``n``);
        ``source``: what to record as the items' origin instead of ``items`` (an upload's
        temporary folder means nothing later)."""
        from assay.platform._platform import new_id, person

        person(by)
        if n is not None and n < 1:
            raise InvalidInput("give a sample of at least 1 item", where="--sample")
        if seed is not None and n is None:
            raise InvalidInput("a seed only chooses a sample: give --sample N too", where="--seed")
        cid = new_id(PREFIX.rstrip("-"))
        if items.startswith("runs:"):
            found = self._runs(parse_runs_query(items), by)
            chosen = sample(sorted(found), n, seed)
            records = [found[run](f"{cid}.{i}") for i, run in enumerate(chosen, 1)]
            total = len(found)
        else:
            files = self._files(Path(items))
            chosen = sample(sorted(files), n, seed)
            records = [files[name](f"{cid}.{i}") for i, name in enumerate(chosen, 1)]
            total = len(files)
        if not records:
            raise InvalidInput(f"{items!r} gives no items to review", where="--items")
        if len(records) > MAX_ITEMS:
            raise InvalidInput(
                f"{len(records)} items (at most {MAX_ITEMS}; use --sample)", where="--items"
            )
        record = CampaignRecord(
            campaign=cid,
            title=protocol.title,
            protocol=protocol.to_json(),
            protocol_id=protocol_id(protocol),
            by=by,
            # a folder by its name: its place on this machine is nobody's business (every
            # manager lists a file campaign over HTTP)
            source=source or (items if items.startswith("runs:") else Path(items).name or items),
            candidates=total,
            sample=n,
            seed=seed if n is not None else None,
            items=records,
        )
        self.p.ledger.append(
            NewEntry(kind=CAMPAIGN, subject=cid, body=record.to_json(), at=self.p.clock())
        )
        return self.show(cid, by)

    def _files(self, folder: Path) -> dict[str, Callable[[str], ItemRecord]]:
        if not folder.is_dir():
            raise InvalidInput(
                f"{str(folder)!r} is neither a folder nor a runs query (runs:KEY=VALUE,...)",
                where="--items",
            )
        cap = self.p.config.max_staged_mb * 1024 * 1024
        found: dict[str, Callable[[str], ItemRecord]] = {}
        for path in sorted(folder.iterdir()):
            if path.name.startswith("."):
                continue
            blob = self.p.ledger.blobs.put_file(path, cap)

            def item(
                iid: str, name: str = path.name, sha: str = blob.sha256, size: int = blob.size
            ) -> ItemRecord:
                cid = iid.partition(".")[0]
                uri = f"assay://campaign/{cid}/item/{iid.partition('.')[2]}"
                what = f"the item {name!r}"
                material = Material(uri=uri, sha256=sha, size=size, what=what)
                return ItemRecord(item=iid, label=name, target=sha, materials=[material])

            found[path.name] = item
        return found

    def _runs(self, query: RunsQuery, by: str) -> dict[str, Callable[[str], ItemRecord]]:
        """Runs matching the query, each a maker of its item, of problems the acting user
        manages (an audit reads submissions' work): a ``problem=`` they do not manage is
        refused before any run is read, and without ``problem=`` other problems' runs are
        simply not candidates. (Refusing when a selected run was another's made the refusal an
        oracle: whether a problem had, say, a verified run in a window, while its results are
        held.)"""
        if query.problem is not None and by not in self.p._managers(query.problem):
            raise InvalidInput(
                f"{by!r} does not manage problem {query.problem!r}; an audit reviews runs of "
                "problems you manage",
                where="--as",
            )
        mine = {e.subject for e in self.p.ledger.find(kind=r.PROBLEM) if by in e.body["managers"]}
        stages: dict[str, list[str]] = {}
        used: dict[str, list[str]] = {}
        for entry in self.p.ledger.find(kind=r.STAGE, problem=query.problem):
            checkers = [c["checker"] for c in entry.body.get("checks", [])]
            stages.setdefault(entry.body["run"], []).extend(checkers + entry.body["checkers"])
            used.setdefault(entry.body["run"], []).extend(entry.body["checkers"])
        revoked = revoked_runs(self.p.ledger.find, query.problem, used)
        found: dict[str, Callable[[str], ItemRecord]] = {}
        for entry in self.p.ledger.find(kind=r.FINISHED, problem=query.problem, since=query.since):
            body = entry.body
            if entry.problem not in mine:
                continue
            if query.status not in ("any", body["status"]) or (
                query.until and entry.at >= query.until
            ):
                continue
            if body["run"] in revoked:  # its verdict no longer stands: nothing to audit
                continue
            if query.checker is not None and not any(
                c.startswith(query.checker) for c in stages.get(body["run"], [])
            ):
                continue

            def item(iid: str, entry: Entry = entry) -> ItemRecord:
                return ItemRecord(
                    item=iid,
                    label=entry.body["run"],
                    target=entry.body["submission"],
                    run=entry.body["run"],
                    submission=entry.body["submission"],
                    problem=entry.problem,
                    participant=entry.participant,
                    automated=entry.body["status"],
                )

            found[body["run"]] = item
        return found

    # ------------------------------------------------------------------ reading

    def record(self, cid: str) -> tuple[CampaignRecord, Protocol, datetime]:
        """The campaign's record, its protocol and when it opened (immutable: cached)."""
        if cid not in self._records:
            found = self.p.ledger.find(kind=CAMPAIGN, subject=cid)
            if not found:
                raise InvalidInput(f"no campaign {cid!r} here", where="CAMPAIGN")
            record = CampaignRecord.model_validate(found[0].body)
            protocol = Protocol.model_validate(record.protocol)
            self._records[cid] = (record, protocol, found[0].at)
        return self._records[cid]

    def _item(self, iid: str) -> tuple[CampaignRecord, Protocol, datetime, ItemRecord]:
        cid = iid.partition(".")[0]
        record, protocol, opened = self.record(cid)
        item = next((i for i in record.items if i.item == iid), None)
        if item is None:
            raise InvalidInput(f"no item {iid!r} in campaign {cid}", where="SEAT")
        return record, protocol, opened, item

    def _board(
        self, iid: str, entries: list[Entry], now: datetime, gone: dict[str, set[str]] | None = None
    ) -> Board:
        record, protocol, opened, item = self._item(iid)
        return self._item_board(record, protocol, opened, item, entries, now, gone)

    def _item_board(
        self,
        record: CampaignRecord,
        protocol: Protocol,
        opened: datetime,
        item: ItemRecord,
        entries: list[Entry],
        now: datetime,
        gone: dict[str, set[str]] | None = None,
    ) -> Board:
        """The item's board; concluded inconclusive before anyone answers when the run's
        submission lost an artifact a node shows (withdrawn work is never reviewed: the stage's
        rule, ``Reviews._foregone``). ``gone``: every submission's withdrawn roles, read once
        for a listing (read here when None)."""
        board = Board(protocol, item.item, record.campaign, STAGE, opened, entries, now)
        if board.concluded is not None or item.submission is None:
            return board
        roles = sorted((self._gone() if gone is None else gone).get(item.submission, set()))
        shows = any(
            protocol.review(name).shows.submission
            for name, node in protocol.nodes.items()
            if isinstance(node, ReviewNode)
        )
        if not roles or not shows:
            return board
        foregone = rr.ConcludedRecord(
            run=board.run,
            stage=board.stage,
            outcome="unresolved",
            status="inconclusive",
            detail=f"the artifact {roles[0]!r} was withdrawn; nobody can review it",
        )
        return Board(protocol, item.item, record.campaign, STAGE, opened, entries, now, foregone)

    def _gone(self) -> dict[str, set[str]]:
        """Every submission's withdrawn artifact roles (one read for a whole listing)."""
        found: dict[str, set[str]] = {}
        for entry in self.p.ledger.find(kind=r.WITHDRAWN):
            found.setdefault(entry.subject, set()).add(entry.body["artifact"]["role"])
        return found

    def _conflict(
        self,
        item: ItemRecord,
        user: str,
        node: ReviewNode,
        now: datetime,
        participants: dict[str, set[str]] | None = None,
    ) -> str | None:
        """Why ``user``, a participant of a run item's problem, may not sit on ``node`` now
        (private work before the cutoff, a reference the node shows still sealed): the stage's
        rule, ``Reviews._participant_conflict``. None for a file item."""
        if item.submission is None or item.problem is None:
            return None
        cache = participants if participants is not None else {}
        if item.problem not in cache:  # the same cache ``_participant_conflict`` fills
            cache[item.problem] = {
                fold(e.participant)
                for e in self.p.ledger.find(kind=r.SUBMISSION, problem=item.problem)
                if e.participant
            }
        if fold(user) not in cache[item.problem]:
            return None  # not a participant: no history read (a listing stays cheap)
        history = self.p._history(item.submission)
        return self.reviews._participant_conflict(history, user, node, now, cache)

    def owns(self, subject: str) -> bool:
        """Whether a seat's first part names a campaign item rather than a submission."""
        return is_campaign_item(subject)

    def all(self) -> list[str]:
        """Every campaign's id, oldest first (read from the ledger, never cached)."""
        return [e.subject for e in self.p.ledger.find(kind=CAMPAIGN)]

    def show(self, cid: str, viewer: str) -> CampaignView:
        """Every item's decision and review record (responses of an unsettled node withheld,
        as in a stage), as ``viewer`` may see it: whole to the campaign's opener and to whoever
        manages every problem it audits; to anyone else only the run items they sat on (an
        audit reads work the platform may keep private, or whose result is held) and the file
        items, never with the ``automated`` verdict (an auditor judges the work, not what the
        checker said of it)."""
        from assay.platform._platform import person

        person(viewer)
        record, protocol, opened = self.record(cid)
        for item in record.items:
            self.advance(item.item)
        problems = {i.problem for i in record.items if i.problem is not None}
        whole = viewer == record.by or all(viewer in self.p._managers(p) for p in problems)
        now = self.p.clock()
        grouped = self._entries(cid)
        gone = self._gone()
        views = []
        boards = []
        for item in record.items:
            entries = grouped.get(item.item, [])
            board = self._item_board(record, protocol, opened, item, entries, now, gone)
            sat = any(s.user == viewer for n in board.nodes.values() for s in n.seats)
            if not whole and item.run is not None and not sat:
                continue
            boards.append((item, board))
            end = board.concluded
            views.append(
                CampaignItemView(
                    item=item.item,
                    label=item.label,
                    target=item.target,
                    automated=item.automated if whole else None,
                    decision=end.outcome if end else None,
                    status=end.status if end else None,
                    detail=end.detail if end else None,
                    review=stage_review(board, viewer),
                )
            )
        order, rule = ranking(protocol, boards)
        return CampaignView(
            campaign=cid,
            title=record.title,
            protocol_id=record.protocol_id,
            by=record.by,
            created=opened,
            source=record.source,
            candidates=record.candidates,
            sample=record.sample,
            seed=record.seed,
            items=views,
            order=order,
            order_rule=rule,
        )

    def _entries(self, cid: str, read: list[Entry] | None = None) -> dict[str, list[Entry]]:
        """The campaign's review entries by item, in chain order (from ``read``, the review
        entries already read, or one read)."""
        grouped: dict[str, list[Entry]] = {}
        for entry in self.p.ledger.find(kind=rr.KINDS) if read is None else read:
            if entry.body.get("run") == cid and entry.body.get("stage") == STAGE:
                grouped.setdefault(entry.subject, []).append(entry)
        return grouped

    # ------------------------------------------------------------------ writing

    def _commit(
        self,
        iid: str,
        act: Callable[[Board, ItemRecord, datetime], tuple[list[NewEntry], Any]],
        seat: str | None,
    ) -> Any:
        """One write on one item, guarded as a stage's is (decided again if the item's
        entries changed meanwhile), with every step the board then owes in the same append."""
        _, _, _, item = self._item(iid)
        for _ in range(_TRIES):
            entries = self.p.ledger.find(subject=iid)
            last = entries[-1].seq if entries else None
            now = self.p.clock()
            board = self._board(iid, entries, now)

            def unchanged(find: Reader, last: int | None = last) -> None:
                newest = find(subject=iid, newest=1)
                if (newest[-1].seq if newest else None) != last:
                    raise _Raced

            owed = board.steps()  # first what the clock decided (a node past its deadline)
            new: list[NewEntry] = []
            answer = None
            if not owed:
                if seat is None:
                    return None
                new, answer = act(board, item, now)
                owed = board.with_entries(entries + [_stored(e) for e in new]).steps()
            steps = [NewEntry(kind=kind, subject=iid, body=body, at=now) for kind, body in owed]
            try:
                self.p.ledger.append(*new, *steps, guard=unchanged)
            except _Raced:
                continue
            if new:
                return answer
        raise LedgerError(f"campaign item {iid} kept changing under this write; try again")

    def advance(self, iid: str) -> None:
        """Record what the clock decided (a node past its deadline concludes the item)."""
        self._commit(iid, lambda b, i, now: ([], None), None)

    def seats(self, user: str, groups: set[str] | None) -> tuple[list[SeatView], list[SeatView]]:
        """Open seats of every campaign ``user`` may claim, and those they hold."""
        open_: list[SeatView] = []
        held: list[SeatView] = []
        campaigns = self.all()
        read = self.p.ledger.find(kind=rr.KINDS) if campaigns else []
        gone = self._gone() if campaigns else {}
        participants: dict[str, set[str]] = {}
        for cid in campaigns:
            record, protocol, opened = self.record(cid)
            grouped = self._entries(cid, read)
            now = self.p.clock()
            for item in record.items:
                entries = grouped.get(item.item, [])
                board = self._item_board(record, protocol, opened, item, entries, now, gone)
                if board.concluded is not None or board.conclusion() is not None:
                    continue
                for name, state in board.nodes.items():
                    for seat in state.seats:
                        view = SeatView(
                            seat=seat.id,
                            submission=item.item,
                            problem=cid,
                            stage=STAGE,
                            node=name,
                            state=seat.state,
                            holder=seat.claim.user if seat.claim else None,
                            until=seat.claim.until if seat.claim else None,
                            deadline=state.deadline,
                            rubric=protocol.review(name).rubric,
                        )
                        if seat.user == user and seat.state == "claimed":
                            held.append(view)
                        elif (
                            board.why_not_claim(seat.id, user, groups, _submitter(item)) is None
                            and self._conflict(item, user, protocol.review(name), now, participants)
                            is None
                        ):
                            open_.append(view)
        return open_, held

    def claim(self, seat: str, user: str) -> ClaimView:
        """Claim a campaign seat exactly as a stage's seat is claimed (one guarded write)."""
        iid = _item_of(seat)

        def act(board: Board, item: ItemRecord, now: datetime) -> tuple[list[NewEntry], Any]:
            why = board.why_not_claim(seat, user, self.reviews.groups(user), _submitter(item))
            found = board.seat(seat)
            if why is None and found is not None:
                why = self._conflict(item, user, board.protocol.review(found.node), now)
            if why is not None:
                raise InvalidInput(f"{seat}: {why}", where="SEAT")
            assert found is not None
            shown = self._materials(board, item, found.node)
            body, view = seat_claim(board, STAGE, seat, user, now, shown)
            # the item's problem on the claim: ``Reviews.readers`` then knows who read its work
            claimed = NewEntry(
                kind=rr.CLAIMED, subject=iid, body=body.to_json(), problem=item.problem, at=now
            )
            return [claimed], view

        return self._commit(iid, act, seat)  # type: ignore[no-any-return]

    def respond(
        self, seat: str, user: str, data: bytes
    ) -> tuple[str, list[dict[str, Any]], dict[str, Any] | None]:
        """Record the response; the response's sha256, the item's reductions and conclusion."""
        iid = _item_of(seat)

        def act(board: Board, item: ItemRecord, now: datetime) -> tuple[list[NewEntry], Any]:
            why = board.why_not_respond(seat, user)
            if why is not None:
                raise InvalidInput(f"{seat}: {why}", where="SEAT")
            body, sha = seat_response(board, STAGE, seat, user, data)
            return [NewEntry(kind=rr.RESPONDED, subject=iid, body=body.to_json(), at=now)], sha

        sha = self._commit(iid, act, seat)
        steps = [
            e.body for e in self.p.ledger.find(subject=iid) if e.kind in (rr.REDUCED, rr.CONCLUDED)
        ]
        concluded = next((s for s in steps if "status" in s), None)
        return sha, [s for s in steps if "op" in s], concluded

    def material(self, seat: str, uri: str, user: str) -> bytes:
        """The bytes of a material the seat showed ``user``, found by its whole URI and only
        when they hash to what the seat listed; a run item's as a stage serves its own (the
        participant conflict checked again, a withdrawn artifact refused)."""
        iid = _item_of(seat)
        _, _, _, item = self._item(iid)
        entries = self.p.ledger.find(subject=iid)
        board = self._board(iid, entries, self.p.clock())
        found = board.seat(seat)
        shown = None
        if found is not None and found.user == user:
            shown = (found.response or found.claim).shown  # type: ignore[union-attr]
        material = next((m for m in shown or [] if m.uri == uri), None)
        if material is None or found is None:
            raise InvalidInput(f"{uri!r} is not a material of a seat {user!r} holds", where="URI")
        if item.submission is not None:
            conflicted = self._conflict(item, user, board.protocol.review(found.node), board.now)
            if conflicted is not None:
                raise InvalidInput(f"{seat}: {conflicted}", where="SEAT")
            data = self.reviews._bytes_of(self.p._history(item.submission), board, material)
        else:
            data = _file_bytes(self.p, board, material)
        if hashlib.sha256(data).hexdigest() != material.sha256:
            raise InvalidInput(
                f"{uri!r}: the stored bytes do not hash to the sha256 this seat listed",
                where="URI",
            )
        return data

    def _materials(self, board: Board, item: ItemRecord, node: str) -> list[Material]:
        """What the node shows of the item: a run's submission as a review stage shows it
        (the same URIs and hashes), a file's bytes, and the reports the node reads."""
        shows = board.protocol.review(node).shows
        if item.submission is not None:
            history = self.p._history(item.submission)
            found = self.reviews._materials(history, board, node)
            return found
        found = list(item.materials) if shows.submission else []
        return found + report_materials(board, shows.reports_of)


class _Raced(Exception):
    """The item's entries changed between the read and the write."""


def _file_bytes(platform: Any, board: Board, material: Material) -> bytes:
    """A file item's material: an earlier seat's report (by its whole URI), or the file."""
    for state in board.nodes.values():
        for other in state.seats:
            if material.uri == f"assay://review/{board.run}/{other.node}/{other.index}":
                if other.response is None:
                    break
                return canonical_json(other.response.response).encode()
    try:
        return platform.ledger.blobs.read(material.sha256)  # type: ignore[no-any-return]
    except BlobMissing:
        raise InvalidInput(
            f"{material.uri!r}: its bytes are no longer stored", where="URI"
        ) from None


def revoked_runs(find: Reader, problem: str | None, used: dict[str, list[str]]) -> set[str]:
    """Runs that no longer count: a checker they used was revoked after they started, for
    their problem (``History.revoked``'s rule, for every run of a query at once)."""
    revocations = find(kind=r.REVOKED)
    if not revocations:
        return set()
    gone = set()
    for start in find(kind=r.RUN_STARTED, problem=problem):
        run = start.body["run"]
        checkers = set(used.get(run, []))
        if any(
            e.subject in checkers and e.seq > start.seq and r.revokes(e.body, start.problem)
            for e in revocations
        ):
            gone.add(run)
    return gone


def _submitter(item: ItemRecord) -> str:
    """Who never reviews this item: a run's participant (no file item has one)."""
    return item.participant or ""


def _item_of(seat: str) -> str:
    parsed = parse_seat(seat)
    if parsed is None:
        raise InvalidInput(f"{seat!r} is not a seat id", where="SEAT")
    return parsed[0]


def _stored(entry: NewEntry) -> Entry:
    assert entry.at is not None
    return Entry(**entry.model_dump(), seq=0, prev_hash="", hash="")


def ranking(
    protocol: Protocol, boards: list[tuple[ItemRecord, Board]]
) -> tuple[list[RankedItem] | None, str | None]:
    """A ranking campaign's order: for the protocol's first ``score`` reducer, each item's
    aggregate of its input nodes' scores as that reducer aggregates them (mean, min or max;
    exact, on the numbers as written), highest first; ties broken by the item's place in the
    campaign (earlier first). Items not yet scored are left out. None for a protocol without a
    score reducer."""
    name = next(
        (
            n
            for n in protocol.order()
            if isinstance(protocol.nodes[n], ReduceNode) and protocol.nodes[n].op == "score"  # type: ignore[union-attr]
        ),
        None,
    )
    node = protocol.nodes[name] if name is not None else None
    if not isinstance(node, ReduceNode) or node.field is None:
        return None, None
    scored: list[tuple[Fraction, int, ItemRecord, int]] = []
    for place, (item, board) in enumerate(boards):
        values = [  # exactly as the reducer reads them: a number as written (Decimal) counts
            response[node.field]
            for responses in board.responses(node.inputs).values()
            for response in responses or []
            if isinstance(response.get(node.field), (int, float, Decimal))
            and not isinstance(response.get(node.field), bool)
        ]
        if values:
            scored.append((aggregate_of(values, node.aggregate), place, item, len(values)))
    scored.sort(key=lambda s: (-s[0], s[1]))
    order = [
        RankedItem(
            rank=i,
            item=item.item,
            label=item.label,
            score=float(value),
            aggregate=node.aggregate,
            scores=count,
        )
        for i, (value, _, item, count) in enumerate(scored, 1)
    ]
    rule = (
        f"{node.aggregate} of {node.field!r} over the settled responses of "
        f"{', '.join(node.inputs)} (as the reducer {name!r} aggregates them), highest first; "
        "ties by the item's place in the campaign (earlier first)"
    )
    return order, rule
