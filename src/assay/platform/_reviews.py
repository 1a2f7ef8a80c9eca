"""Review stages on the platform: users and groups, open seats, claims, responses, and the
stage's conclusion, all written to the ledger (``assay.review`` derives the state).

Every write reads the submission's entries, decides, and appends under a guard that the
submission's entries did not change meanwhile; when they did (another claim, response or
conclusion landed first), it decides again from what is now stored. So two reviewers claiming
the last seat at once: exactly one wins, the other is told the seat is claimed.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from assay._errors import InvalidInput
from assay._signed import canonical_json
from assay._wire import WireModel
from assay.ledger import BlobMissing, Entry, LedgerError, NewEntry, Reader
from assay.platform import _records as r
from assay.platform._contract import ReviewStage
from assay.platform._read import History
from assay.platform._revision import Revision
from assay.platform._views import RunView
from assay.review import (
    Board,
    Material,
    Protocol,
    check_response,
    fold,
    parse_protocol,
    parse_seat,
    written_numbers,
)
from assay.review import records as rr
from assay.status import Status

if TYPE_CHECKING:
    from assay.platform._campaigns import Campaigns
    from assay.platform._platform import Platform

MAX_RESPONSE = 1024 * 1024
"""A response is a judgment with a rationale, not a file: a larger one is refused."""
_TRIES = 64
"""How often a write is decided again when the submission changed under it (each round at
least one writer lands, so this bounds the contention, not the work)."""


class UserView(WireModel):
    """A user and every group they belong to."""

    schema_: Literal["assay.user/1"] = Field("assay.user/1", alias="schema")
    name: str
    groups: list[str]
    roles: list[str] = Field(default_factory=list)
    token: str | None = None
    """The new bearer token, in the answer to ``assay user add`` only: shown once, stored as its
    sha256 (a later ``user add`` issues a new one and the old one stops working)."""


class SeatView(WireModel):
    """One seat: where it is, what state it is in, and what the node asks."""

    seat: str
    submission: str
    problem: str
    stage: str
    node: str
    state: str
    """open, claimed or answered."""
    holder: str | None = None
    until: datetime | None = None
    deadline: datetime | None = None
    rubric: str


class SeatsView(WireModel):
    """The seats a user may claim now, and those they hold."""

    schema_: Literal["assay.review_seats/1"] = Field("assay.review_seats/1", alias="schema")
    user: str
    open: list[SeatView]
    held: list[SeatView]


class ClaimView(WireModel):
    """A claimed seat: until when, the rubric, the response schema and the materials."""

    schema_: Literal["assay.review_claim/1"] = Field("assay.review_claim/1", alias="schema")
    seat: str
    user: str
    until: datetime
    deadline: datetime | None
    rubric: str
    response_schema: dict[str, Any]
    assistance: dict[str, Any]
    materials: list[Material]


class RespondView(WireModel):
    """A recorded response, the reductions it allowed, and the run when the stage concluded."""

    schema_: Literal["assay.review_response/1"] = Field("assay.review_response/1", alias="schema")
    seat: str
    user: str
    response_sha256: str
    reductions: list[dict[str, Any]]
    concluded: dict[str, Any] | None = None
    run: RunView | None = None


class SeatRecord(WireModel):
    """A seat as the review record shows it (its holder hidden until the node settles)."""

    seat: str
    state: str
    user: str | None = None
    until: datetime | None = None
    answered: datetime | None = None
    shown: list[Material] = Field(default_factory=list)
    assistance: list[dict[str, str]] | None = None
    response: dict[str, Any] | None = None
    response_sha256: str | None = None
    withheld: str | None = None


class NodeRecord(WireModel):
    """A node as the review record shows it: its state, seats and reduction."""

    name: str
    type: str
    status: str
    opened: datetime | None = None
    deadline: datetime | None = None
    outcome: str | None = None
    detail: str | None = None
    seats: list[SeatRecord] = Field(default_factory=list)


class StageReview(WireModel):
    """One run's review at one stage: every node, and the conclusion once there is one."""

    run: str
    stage: str
    concluded: dict[str, Any] | None
    nodes: list[NodeRecord]


class ReviewRecord(WireModel):
    """The whole review record of a submission, as the ledger holds it (responses of a node
    not yet settled withheld: reviewers judge independently)."""

    schema_: Literal["assay.review_record/1"] = Field("assay.review_record/1", alias="schema")
    submission: str
    reviews: list[StageReview]


class _Raced(Exception):
    """The submission's entries changed between the read and the write."""


class Reviews:
    """The review side of one ``Platform`` (its ledger, clock and caches)."""

    def __init__(self, platform: Platform) -> None:
        self.p = platform
        self._protocols: dict[tuple[str, str], tuple[int, ReviewStage, Protocol]] = {}
        """(contract id, stage) -> the stage's index, definition and parsed protocol
        (contracts are immutable, and validating a protocol checks its JSON Schemas)."""

    @functools.cached_property
    def campaigns(self) -> Campaigns:
        """Standalone review campaigns (``assay.platform._campaigns``): the same boards,
        checks and reducers over items that are not submissions; their seats are listed,
        claimed and answered through the methods below."""
        from assay.platform._campaigns import Campaigns

        return Campaigns(self)

    # ------------------------------------------------------------------ users

    def add_user(
        self, name: str, groups: list[str], by: str, roles: list[str] | None = None
    ) -> UserView:
        """Add a user (or add groups and roles to one); groups and roles accumulate, never
        disappear silently. Issues a new bearer token (32 random bytes), returned once and
        stored as its sha256; it replaces the user's earlier token."""
        from assay.platform._platform import person

        person(name, "NAME")
        person(by)
        for group in groups:
            person(group, "--group")
        for role in roles or []:
            if role not in rr.ROLES:
                raise InvalidInput(
                    f"{role!r} is not a role ({', '.join(rr.ROLES)})", where="--role"
                )
        same = {e.subject for e in self.p.ledger.find(kind=rr.USER)} - {name}
        twin = next((u for u in sorted(same) if fold(u) == fold(name)), None)
        if twin is not None:  # one person to every review rule: never two users
            raise InvalidInput(
                f"{name!r} differs from the user {twin!r} only by case; use {twin!r}",
                where="NAME",
            )
        token = secrets.token_urlsafe(32)
        body = rr.UserRecord(
            name=name,
            groups=sorted(set(groups)),
            by=by,
            roles=sorted(set(roles or [])),
            token_sha256=token_sha256(token),
        )
        self.p.ledger.append(
            NewEntry(kind=rr.USER, subject=name, body=body.to_json(), at=self.p.clock())
        )
        found = self.groups(name)
        return UserView(
            name=name, groups=sorted(found or set()), roles=sorted(self.roles(name)), token=token
        )

    def roles(self, name: str) -> set[str]:
        """The user's roles (empty: none, or not a user here)."""
        return {
            g
            for e in self.p.ledger.find(kind=rr.USER, subject=name)
            for g in e.body.get("roles", [])
        }

    def authenticate(self, token: str) -> str | None:
        """The user whose newest token this is (None: no one's). Compared in constant time."""
        given = token_sha256(token)
        newest: dict[str, str] = {}
        for entry in self.p.ledger.find(kind=rr.USER):
            if entry.body.get("token_sha256"):
                newest[entry.subject] = entry.body["token_sha256"]
        found = None
        for name, stored in newest.items():
            if hmac.compare_digest(given, stored):
                found = name
        return found

    def groups(self, name: str, find: Reader | None = None) -> set[str] | None:
        """The user's groups (None: not a user here)."""
        entries = (find or self.p.ledger.find)(kind=rr.USER, subject=name)
        if not entries:
            return None
        return {g for e in entries for g in e.body["groups"]}

    # ------------------------------------------------------------------ reading state

    def _stage(self, sub: r.SubmissionRecord, stage: str) -> tuple[int, ReviewStage, Protocol]:
        revision = self.p._revision(sub.revision)
        key = (revision.contract or "", stage)
        if key not in self._protocols:
            self._protocols[key] = self._parse_stage(revision, stage)
        return self._protocols[key]

    def _parse_stage(self, revision: Revision, stage: str) -> tuple[int, ReviewStage, Protocol]:
        contract = self.p._contract(revision.contract) if revision.contract else None
        for index, found in enumerate(contract.stages if contract else []):
            if isinstance(found, ReviewStage) and found.name == stage:
                return index, found, parse_protocol(found.protocol)
        raise InvalidInput(f"no review stage {stage!r} in this submission's contract", where="SEAT")

    def _boards(self, history: History, now: datetime) -> list[Board]:
        """A board for every run of the submission that reached a review stage."""
        boards: list[Board] = []
        for run, entries in history.runs.items():
            for entry in entries:
                if entry.kind == r.AWAITING and entry.body.get("type") == "review":
                    _, _, protocol = self._stage(history.submission, entry.body["stage"])
                    board = Board(
                        protocol,
                        history.submission.submission,
                        run,
                        entry.body["stage"],
                        entry.at,
                        history.entries,
                        now,
                    )
                    if board.concluded is None:
                        foregone = self._foregone(history, board, boards)
                        if foregone is not None:
                            board = Board(
                                protocol,
                                history.submission.submission,
                                run,
                                entry.body["stage"],
                                entry.at,
                                history.entries,
                                now,
                                foregone,
                            )
                    boards.append(board)
        return boards

    def _foregone(
        self, history: History, board: Board, earlier: list[Board]
    ) -> rr.ConcludedRecord | None:
        """The conclusion an unconcluded review has before anyone answers: inconclusive when
        an artifact its nodes show was withdrawn (nobody can review it), else the conclusion of
        an earlier run's review of this stage, carried over (a re-check never buys a new
        panel), unless that review was revoked."""
        sub = history.submission
        shows = any(
            board.protocol.review(name).shows.submission
            for name, node in board.protocol.nodes.items()
            if node.type == "review"
        )
        gone = sorted(history.withdrawn & {a.role for a in sub.artifacts}) if shows else []
        if gone:
            return rr.ConcludedRecord(
                run=board.run,
                stage=board.stage,
                outcome="unresolved",
                status="inconclusive",
                detail=f"the artifact {gone[0]!r} was withdrawn; nobody can review it",
            )
        if self._revoked(history, board.stage) is not None:
            return None
        before = next(
            (
                b.concluded
                for b in earlier
                if b.stage == board.stage
                and b.concluded is not None
                and b.concluded.revoked is None
            ),
            None,
        )
        if before is None:
            return None
        origin = before.carried_from or before.run
        said = f"carried over from run {origin}'s review (a re-check opens no new panel): "
        return rr.ConcludedRecord(
            run=board.run,
            stage=board.stage,
            outcome=before.outcome,
            status=before.status,
            detail=before.detail if before.carried_from else said + before.detail,
            carried_from=origin,
        )

    def _revoked(self, history: History, stage: str) -> str | None:
        """Why the stage's review checker (``review:<contract>/<stage>``) is revoked for the
        submission's problem (None: it is not)."""
        sub = history.submission
        contract = self.p._revision(sub.revision).contract
        checker = f"review:{contract}/{stage}"
        return next(
            (
                e.body["why"]
                for e in history.revocations
                if e.subject == checker and r.revokes(e.body, sub.problem)
            ),
            None,
        )

    def due(self, history: History) -> bool:
        """Whether a review of the submission owes the ledger a step nobody recorded yet (a
        node past its deadline, withdrawn work): ``assay show`` records it before answering,
        so a poller never waits on a review the clock already ended."""
        if not any(
            e.kind == r.AWAITING and e.body.get("type") == "review" for e in history.entries
        ):
            return False
        return any(b.steps() for b in self._boards(history, self.p.clock()))

    def _waiting(self) -> list[str]:
        """Submissions with a run that waited at a review stage (concluded ones included)."""
        return sorted(
            {
                e.subject
                for e in self.p.ledger.find(kind=r.AWAITING)
                if e.body.get("type") == "review"
            }
        )

    # ------------------------------------------------------------------ writing

    def _commit(
        self,
        submission: str,
        act: Callable[[History, Board | None, datetime], tuple[list[NewEntry], Any]],
        seat: str | None,
    ) -> tuple[Any, RunView | None, bool]:
        """One write: ``act`` on the seat's board, then every step a board now owes (its
        reductions, its conclusion). A concluding board's entries go into the same append as
        the platform's stage conclusion, so a review is never concluded without its stage (or
        the reverse). The append is guarded: if anything about the submission changed since
        it was read (another claim, response or conclusion landed first), it is decided again
        from what is now stored. Returns ``act``'s answer, the run's view when a stage
        concluded, and whether one did."""
        for _ in range(_TRIES):
            history = self.p._history(submission)
            last = history.entries[-1].seq
            now = self.p.clock()
            boards = self._boards(history, now)
            if seat is not None and any(b.steps() for b in boards):
                self.advance(submission)  # first what the clock decided (a deadline passed)
                continue
            board = _board_of(boards, seat) if seat is not None else None
            entries, answer = act(history, board, now)
            extra = [_stored(e) for e in entries]
            concluding: tuple[r.StageRecord, int] | None = None
            for found in boards:
                if extra and found.run == (board.run if board else None):
                    found = found.with_entries(history.entries + extra)
                steps, record, index = self._steps(found, history, now)
                entries = entries + steps
                if record is not None:
                    concluding = (record, index)
                    break  # one stage per write; ``advance`` comes back for the next

            def unchanged(find: Reader, last: int = last) -> None:
                if find(subject=submission, newest=1)[-1].seq != last:
                    raise _Raced

            try:
                if concluding is not None:
                    view = self.p._conclude_waiting(
                        history, concluding[1], concluding[0], entries, unchanged
                    )
                    return answer, view, True
                if entries:
                    self.p.ledger.append(*entries, guard=unchanged)
                return answer, None, False
            except _Raced:
                continue
        raise LedgerError(f"the review of {submission} kept changing under this write; try again")

    def _steps(
        self, board: Board, history: History, now: datetime
    ) -> tuple[list[NewEntry], r.StageRecord | None, int]:
        """The board's unrecorded reductions and conclusion as entries, and the stage record
        that concludes the platform's stage with them (None while the review goes on)."""
        sub = history.submission
        steps = board.steps()
        why = self._revoked(history, board.stage)
        if why is not None and steps and steps[-1][0] == rr.CONCLUDED:  # the record says so too
            steps[-1] = (rr.CONCLUDED, {**steps[-1][1], "status": "inconclusive", "revoked": why})
        entries = [_about(sub, kind, body, now) for kind, body in steps]
        if not steps or steps[-1][0] != rr.CONCLUDED:
            return entries, None, 0
        conclusion = board.conclusion()
        assert conclusion is not None
        index, stage, _ = self._stage(sub, board.stage)
        revision = self.p._revision(sub.revision)
        assert revision.contract is not None
        checker = f"review:{revision.contract}/{stage.name}"
        status, detail = Status(conclusion.status), conclusion.detail
        if why is not None:  # as a revoked check's outcome is gated: it concludes nothing
            status, detail = (
                Status.INCONCLUSIVE,
                f"the review {checker} was revoked ({why}); it no longer concludes anything "
                f"(it said: {conclusion.status})",
            )
        record = r.StageRecord(
            run=board.run,
            name=board.stage,
            type="review",
            status=status,
            detail=detail,
            mechanism="review",
            checkers=[checker],
            inputs={f"artifact:{a.role}": a.sha256 for a in sub.artifacts},
            started=history.awaiting_since(board.run) or now,
            finished=now,
        )
        return entries, record, index

    # ------------------------------------------------------------------ operations

    def advance(self, submission: str) -> RunView | None:
        """Record what the clock has decided for the submission's reviews (a node past its
        deadline concludes the stage inconclusive)."""
        view = None
        for _ in range(_TRIES):
            _, concluded, did = self._commit(submission, lambda h, b, now: ([], None), None)
            view = concluded or view
            if not did:
                return view
        return view

    def seats(self, user: str) -> SeatsView:
        """Open seats ``user`` may claim now, and the seats they hold."""
        from assay.platform._platform import person

        person(user)
        groups = self.groups(user)
        open_: list[SeatView] = []
        held: list[SeatView] = []
        participants: dict[str, set[str]] = {}
        for submission in self._waiting():
            self.advance(submission)
            history = self.p._history(submission)
            now = self.p.clock()
            for board in self._boards(history, now):
                if board.concluded is not None:
                    continue
                for name, state in board.nodes.items():
                    for seat in state.seats:
                        view = _seat_view(board, history, name, seat, state.deadline)
                        if seat.user == user and seat.state == "claimed":
                            held.append(view)
                        elif (
                            board.why_not_claim(
                                seat.id, user, groups, history.submission.participant
                            )
                            is None
                            and self._participant_conflict(
                                history, user, board.protocol.review(name), now, participants
                            )
                            is None
                        ):
                            open_.append(view)
        more_open, more_held = self.campaigns.seats(user, groups)
        return SeatsView(user=user, open=open_ + more_open, held=held + more_held)

    def claim(self, seat: str, user: str) -> ClaimView:
        """Claim ``seat`` for its node's lease; InvalidInput saying why not otherwise."""
        from assay.platform._platform import person

        person(user)
        submission = _submission_of(seat)
        if self.campaigns.owns(submission):
            return self.campaigns.claim(seat, user)

        def act(history: History, board: Board | None, now: datetime) -> tuple[list[NewEntry], Any]:
            if board is None:
                raise InvalidInput(f"no seat {seat!r} here", where="SEAT")
            groups = self.groups(user)
            why = board.why_not_claim(seat, user, groups, history.submission.participant)
            found = board.seat(seat)
            if why is None and found is not None:
                node = board.protocol.review(found.node)
                why = self._participant_conflict(history, user, node, now)
            if why is not None:
                raise InvalidInput(f"{seat}: {why}", where="SEAT")
            assert found is not None
            shown = self._materials(history, board, found.node)
            body, view = seat_claim(board, board.stage, seat, user, now, shown)
            return [_about(history.submission, rr.CLAIMED, body.to_json(), now)], view

        return self._commit(submission, act, seat)[0]  # type: ignore[no-any-return]

    def respond(self, seat: str, user: str, data: bytes) -> RespondView:
        """Record ``user``'s response on the seat they hold; InvalidInput with the schema's
        reason (the seat stays theirs) when it is not valid."""
        from assay.platform._platform import person

        person(user)
        if len(data) > MAX_RESPONSE:
            raise InvalidInput(f"larger than {MAX_RESPONSE} bytes", where="--file")
        submission = _submission_of(seat)
        if self.campaigns.owns(submission):
            sha, reductions, concluded = self.campaigns.respond(seat, user, data)
            return RespondView(
                seat=seat,
                user=user,
                response_sha256=sha,
                reductions=reductions,
                concluded=concluded,
            )

        def act(history: History, board: Board | None, now: datetime) -> tuple[list[NewEntry], Any]:
            if board is None:
                raise InvalidInput(f"no seat {seat!r} here", where="SEAT")
            why = board.why_not_respond(seat, user)
            if why is not None:
                raise InvalidInput(f"{seat}: {why}", where="SEAT")
            body, sha = seat_response(board, board.stage, seat, user, data)
            return [_about(history.submission, rr.RESPONDED, body.to_json(), now)], sha

        sha, view, _ = self._commit(submission, act, seat)
        history = self.p._history(submission)
        parsed = parse_seat(seat)
        assert parsed is not None
        run, stage = parsed[1], parsed[2]
        steps = [
            e.body
            for e in history.entries
            if e.kind in (rr.REDUCED, rr.CONCLUDED)
            and e.body.get("run") == run
            and e.body.get("stage") == stage
        ]
        concluded = next((s for s in steps if "status" in s), None)
        if concluded is not None and view is None:
            view = self.p.show(submission, history.submission.participant).runs[-1]
        return RespondView(
            seat=seat,
            user=user,
            response_sha256=sha,
            reductions=[s for s in steps if "op" in s],
            concluded=concluded,
            run=view,
        )

    def show(self, submission: str, viewer: str) -> ReviewRecord:
        """The whole review record, each node's responses withheld until it settles."""
        from assay.platform._platform import person

        person(viewer)
        self.advance(submission)
        history = self.p._history(submission)
        boards = self._boards(history, self.p.clock())
        sat = any(s.user == viewer for b in boards for n in b.nodes.values() for s in n.seats)
        if not sat:  # the platform's privacy (independent entry) holds here too
            self.p._view_context(history, viewer)
        manager = viewer in self.p._managers(history.submission.problem)
        reviews = []
        for board in boards:
            review = stage_review(board, viewer, manager)
            why = self._revoked(history, board.stage)
            if (
                review.concluded is not None
                and why is not None
                and not review.concluded.get("revoked")
            ):  # revoked after it concluded: the record says so, as the run does
                review = review.model_copy(
                    update={"concluded": {**review.concluded, "revoked": why}}
                )
            reviews.append(review)
        return ReviewRecord(submission=submission, reviews=reviews)

    def material(self, seat: str, uri: str, user: str) -> bytes:
        """The bytes of a material the seat showed ``user`` (its holder or responder only)."""
        submission = _submission_of(seat)
        if self.campaigns.owns(submission):
            return self.campaigns.material(seat, uri, user)
        history = self.p._history(submission)
        board = _board_of(self._boards(history, self.p.clock()), seat)
        found = board.seat(seat) if board else None
        shown = None
        if found is not None and found.user == user:
            shown = (found.response or found.claim).shown  # type: ignore[union-attr]
        material = next((m for m in shown or [] if m.uri == uri), None)
        if material is None:
            raise InvalidInput(f"{uri!r} is not a material of a seat {user!r} holds", where="URI")
        assert board is not None and found is not None
        conflicted = self._participant_conflict(
            history, user, board.protocol.review(found.node), board.now
        )
        if conflicted is not None:
            raise InvalidInput(f"{seat}: {conflicted}", where="SEAT")
        data = self._bytes_of(history, board, material)
        if hashlib.sha256(data).hexdigest() != material.sha256:  # what the record says was shown
            raise InvalidInput(
                f"{uri!r}: the stored bytes do not hash to the sha256 this seat listed",
                where="URI",
            )
        return data

    def _bytes_of(self, history: History, board: Board, material: Material) -> bytes:
        """A listed material's bytes, found by its whole URI (never by its tail: an artifact
        role or reference key named ``summary`` is not the summary)."""
        sub = history.submission
        uri = material.uri
        if uri == f"assay://submission/{sub.submission}/summary":
            return (sub.summary or "").encode("utf-8", "surrogatepass")
        prefix = f"assay://submission/{sub.submission}/artifact/"
        if uri.startswith(prefix) and uri[len(prefix) :] in history.withdrawn:
            raise InvalidInput(
                f"{uri!r}: the artifact {uri[len(prefix) :]!r} was withdrawn; nobody can review it",
                where="URI",
            )
        for state in board.nodes.values():
            for other in state.seats:
                if uri == f"assay://review/{board.run}/{other.node}/{other.index}":
                    if other.response is None:
                        break
                    return canonical_json(other.response.response).encode()
        try:
            return self.p.ledger.blobs.read(material.sha256)
        except BlobMissing:
            raise InvalidInput(f"{uri!r}: its bytes are no longer stored", where="URI") from None

    # ------------------------------------------------------------------ participants

    def _participant_conflict(
        self,
        history: History,
        user: str,
        node: Any,
        now: datetime,
        participants: dict[str, set[str]] | None = None,
    ) -> str | None:
        """Why ``user``, a participant of the same problem, may not sit on ``node`` of this
        submission now (None: they may): while the problem's submissions are private
        (independent entry, before the cutoff), or while a reference the node shows is still
        sealed, a competitor would read what the platform keeps from them. ``participants``:
        a cache of each problem's participants (folded names) for one listing."""
        sub = history.submission
        revision = self.p._revision(sub.revision)
        until: list[datetime] = []
        independent = revision.policy.independent_entry
        if independent is not None and now < independent.cutoff:
            until.append(independent.cutoff)
        if node.shows.sealed_references:
            for key in revision.references:
                unseals = revision.unseals_at(key)
                if unseals is not None and now < unseals:
                    until.append(unseals)
        if not until:
            return None
        cache = participants if participants is not None else {}
        if sub.problem not in cache:
            cache[sub.problem] = {
                fold(e.participant)
                for e in self.p.ledger.find(kind=r.SUBMISSION, problem=sub.problem)
                if e.participant
            }
        if fold(user) not in cache[sub.problem]:
            return None
        return (
            f"{user!r} is a participant of {sub.problem!r}: conflicted on its other "
            f"submissions until {max(until).isoformat().replace('+00:00', 'Z')} (private work "
            "or sealed references)"
        )

    def readers(self, problem: str, revision: Revision, at: datetime) -> dict[str, str]:
        """Users (folded names) who may not submit to ``problem`` now, and why: a reviewer
        shown another participant's private work (independent entry, before the cutoff) or a
        reference still sealed would submit knowing what participants may not know. Read once
        per batch of submissions (``Platform.submit_many``)."""
        independent = revision.policy.independent_entry
        private = independent is not None and at < independent.cutoff
        sealed = any(
            (u := revision.unseals_at(key)) is not None and at < u for key in revision.references
        )
        if not (private or sealed):
            return {}
        found: dict[str, str] = {}
        for entry in self.p.ledger.find(kind=rr.CLAIMED, problem=problem):
            user = entry.body.get("user")
            if not isinstance(user, str) or fold(user) in found:
                continue
            why = None
            if private:
                assert independent is not None
                why = f"submissions are private until {independent.cutoff.isoformat()}"
            for shown in entry.body.get("shown", []):
                why = why or self._still_sealed(shown.get("uri", ""), at)
            if why is not None:
                found[fold(user)] = (
                    f"{user!r} reviewed work of {problem!r} and may not submit to it now ({why})"
                )
        return found

    def _still_sealed(self, uri: str, at: datetime) -> str | None:
        """Why the reference ``uri`` names is still sealed at ``at`` (None: it is not one)."""
        parts = uri.removeprefix("assay://revision/").split("/")
        if not uri.startswith("assay://revision/") or len(parts) != 3 or parts[1] != "reference":
            return None
        unseals = self.p._revision(parts[0]).unseals_at(parts[2])
        if unseals is None or at >= unseals:
            return None
        return f"it was shown reference {parts[2]!r}, sealed until {unseals.isoformat()}"

    # ------------------------------------------------------------------ materials

    def _materials(self, history: History, board: Board, name: str) -> list[Material]:
        """What the node shows, each with its content hash and ``assay://`` URI."""
        node = board.protocol.review(name)
        shows = node.shows
        sub = history.submission
        revision: Revision = self.p._revision(sub.revision)
        rid = sub.revision
        now = board.now
        found: list[Material] = []
        if shows.submission:
            for a in sub.artifacts:
                if a.role not in history.withdrawn:
                    found.append(
                        Material(
                            uri=f"assay://submission/{sub.submission}/artifact/{a.role}",
                            sha256=a.sha256,
                            size=a.size,
                            what=f"the submission's {'folder' if a.tree else 'file'} {a.role!r}",
                        )
                    )
            if sub.summary is not None:
                data = sub.summary.encode("utf-8", "surrogatepass")
                found.append(
                    Material(
                        uri=f"assay://submission/{sub.submission}/summary",
                        sha256=hashlib.sha256(data).hexdigest(),
                        size=len(data),
                        what="the submission's summary",
                    )
                )
        if shows.statement:
            found.append(
                Material(
                    uri=f"assay://revision/{rid}/statement",
                    sha256=revision.statement.sha256,
                    size=revision.statement.size,
                    what="the problem statement",
                )
            )
        if shows.skills:
            for path, binding in sorted(revision.skills.items()):
                found.append(
                    Material(
                        uri=f"assay://revision/{rid}/skill/{path}",
                        sha256=binding.sha256,
                        size=binding.size,
                        what=f"skill document {path}",
                    )
                )
        if shows.references:
            for key, binding in sorted(revision.references.items()):
                until = revision.unseals_at(key)
                if until is not None and now < until and not shows.sealed_references:
                    continue
                found.append(
                    Material(
                        uri=f"assay://revision/{rid}/reference/{key}",
                        sha256=binding.sha256,
                        size=binding.size,
                        what=f"reference {key!r}" + (" (sealed)" if until and now < until else ""),
                    )
                )
        return found + report_materials(board, shows.reports_of)


def _about(sub: r.SubmissionRecord, kind: str, body: dict[str, Any], now: datetime) -> NewEntry:
    """An entry about the submission: its subject, problem and participant, so every review
    fact is in the submission's one indexed history."""
    return NewEntry(
        kind=kind,
        subject=sub.submission,
        body=body,
        problem=sub.problem,
        participant=sub.participant,
        at=now,
    )


def seat_claim(
    board: Board, stage: str, seat: str, user: str, now: datetime, shown: list[Material]
) -> tuple[rr.ClaimedRecord, ClaimView]:
    """The claim of ``seat`` and what its claimer is shown, for a stage and a campaign alike: the
    lease runs from ``now`` and never past the node's deadline."""
    found = board.seat(seat)
    assert found is not None
    node = board.protocol.review(found.node)
    deadline = board.nodes[found.node].deadline
    until = now + timedelta(hours=node.lease_hours)
    if deadline is not None:
        until = min(until, deadline)
    body = rr.ClaimedRecord(
        run=board.run, stage=stage, node=found.node, seat=seat, user=user, until=until, shown=shown
    )
    view = ClaimView(
        seat=seat,
        user=user,
        until=until,
        deadline=deadline,
        rubric=node.rubric,
        response_schema=node.response_schema,
        assistance=node.assistance.to_json(),
        materials=shown,
    )
    return body, view


def seat_response(
    board: Board, stage: str, seat: str, user: str, data: bytes
) -> tuple[rr.RespondedRecord, str]:
    """The response record of the seat ``user`` holds and its sha256, for a stage and a campaign
    alike; InvalidInput with the schema's reason when the response is not valid. The numbers
    are kept as written, so a score reducer compares exactly what the reviewer wrote."""
    found = board.seat(seat)
    assert found is not None and found.claim is not None
    node = board.protocol.review(found.node)
    shown = found.claim.shown
    response, assistance = check_response(node, found.node, data, {m.uri for m in shown})
    sha = hashlib.sha256(canonical_json(response).encode()).hexdigest()
    body = rr.RespondedRecord(
        run=board.run,
        stage=stage,
        node=found.node,
        seat=seat,
        user=user,
        response=response,
        response_sha256=sha,
        assistance=assistance,
        shown=shown,
        written=written_numbers(data, response),
    )
    return body, sha


def token_sha256(token: str) -> str:
    """How a bearer token is stored and compared: its sha256, hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _submission_of(seat: str) -> str:
    parsed = parse_seat(seat)
    if parsed is None:
        raise InvalidInput(
            f"{seat!r} is not a seat id (SUBMISSION/RUN/STAGE/NODE/N, as 'assay review seats' "
            "lists them)",
            where="SEAT",
        )
    return parsed[0]


def _board_of(boards: list[Board], seat: str) -> Board | None:
    parsed = parse_seat(seat)
    if parsed is None:
        return None
    return next((b for b in boards if b.run == parsed[1] and b.stage == parsed[2]), None)


def _stored(entry: NewEntry) -> Entry:
    """A new entry as the board reads it before it is stored (seq and hash do not matter to a
    board)."""
    assert entry.at is not None
    return Entry(**entry.model_dump(), seq=0, prev_hash="", hash="")


def _seat_view(
    board: Board, history: History, name: str, seat: Any, deadline: datetime | None
) -> SeatView:
    node = board.protocol.review(name)
    return SeatView(
        seat=seat.id,
        submission=board.submission,
        problem=history.submission.problem,
        stage=board.stage,
        node=name,
        state=seat.state,
        holder=seat.claim.user if seat.claim else None,
        until=seat.claim.until if seat.claim else None,
        deadline=deadline,
        rubric=node.rubric,
    )


def stage_review(board: Board, viewer: str, manager: bool = False) -> StageReview:
    """One stage's (or campaign item's) review record as ``viewer`` may see it: each node's
    responses withheld until it settles, except from their own author; and until then who
    sits on its other seats too (panelists cannot find each other, nor the submitter whom to
    lobby), except from a ``manager``."""
    nodes = []
    for name, state in board.nodes.items():
        node = board.protocol.nodes[name]
        seats = []
        for seat in state.seats:
            fields: dict[str, Any] = {}
            if not (board.visible(name) or manager or seat.user is None or seat.user == viewer):
                withheld = (
                    f"withheld until node {name!r} settles (reviewers judge independently; "
                    "who sits on it too)"
                )
                seats.append(
                    SeatRecord(
                        seat=seat.id, state=seat.state, answered=seat.answered, withheld=withheld
                    )
                )
                continue
            if seat.claim is not None:
                fields.update(until=seat.claim.until, shown=seat.claim.shown)
            if seat.response is not None:
                fields.update(answered=seat.answered, shown=seat.response.shown)
                if board.visible(name) or seat.response.user == viewer:
                    fields.update(
                        response=seat.response.response,
                        response_sha256=seat.response.response_sha256,
                        assistance=seat.response.assistance,
                    )
                else:
                    fields["withheld"] = (
                        f"withheld until node {name!r} settles (reviewers judge independently)"
                    )
            record = SeatRecord(seat=seat.id, state=seat.state, user=seat.user, **fields)
            seats.append(record)
        nodes.append(
            NodeRecord(
                name=name,
                type=node.type,
                status=state.status,
                opened=state.opened,
                deadline=state.deadline,
                outcome=state.outcome,
                detail=state.detail,
                seats=seats,
            )
        )
    return StageReview(
        run=board.run,
        stage=board.stage,
        concluded=board.concluded.to_json() if board.concluded else None,
        nodes=nodes,
    )


def report_materials(board: Board, nodes: list[str]) -> list[Material]:
    """The earlier nodes' reports a node shows (escalation), each with its hash and URI."""
    found = []
    for earlier in nodes:
        for seat in board.nodes[earlier].seats:
            if seat.response is not None:
                size = len(canonical_json(seat.response.response).encode())
                found.append(
                    Material(
                        uri=f"assay://review/{board.run}/{earlier}/{seat.index}",
                        sha256=seat.response.response_sha256,
                        size=size,
                        what=f"the report of {earlier!r} seat {seat.index} ({seat.response.user})",
                    )
                )
    return found
