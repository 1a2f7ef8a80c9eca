"""What the web pages and the API read and write, each under the platform's rules, as the
authenticated user. Every refusal is a ``Refused`` whose message says only what the asker may
know (a submission they may not see is "not found", exactly as one that does not exist).

The platform applies the release rules when it builds a view (sealed details, held results,
independent entry); this module adds what only the web serves: bytes of references, statements
and skills, a reviewer's seat with its materials, and the manager's runs by checker.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay.platform import (
    AllowanceUsed,
    ArchiveLimits,
    Contract,
    ExternalStage,
    Platform,
    ProblemView,
    Published,
    ReviewStage,
    Revision,
    RunView,
    SubmissionView,
    publish_archive,
)
from assay.review import ReviewNode, parse_protocol, parse_seat
from assay.status import Status
from assay.web._identity import Identity
from assay.web._throttle import LoginLimits

# The platform's entry kinds this module reads (``assay.platform`` writes them).
PROBLEM = "problem.published"
REVISION = "revision.published"
CONTRACT = "contract.published"
SUBMISSION = "submission.made"
STAGE = "stage.concluded"
REVOKED = "checker.revoked"

NOT_FOUND = "not found (or not yours to see)"
PUBLISHING_AT_ONCE = 2
"""Archives published at once in one process; more get 429 (each may hold about four times
the archive content cap in memory while it is read and checked)."""


class Refused(Exception):
    """A request refused: ``status`` and a message safe to show the asker."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


@dataclass
class SeatPage:
    """A seat the user holds (or answered): the node's rubric and schema, what it shows."""

    seat: str
    problem: str
    node: ReviewNode
    node_name: str
    state: str
    until: datetime | None
    materials: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None


@dataclass
class ExternalForm:
    """An external stage of a submission's contract that the asker is named to conclude."""

    submission: str
    problem: str
    participant: str
    stage: ExternalStage


class Web:
    """The platform the pages and the API share (opened on first use), and the identity."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._platform: Platform | None = None
        self._lock = threading.Lock()
        self.limits = LoginLimits()
        """Sign-in rate limits, in this process's memory (``assay.web._throttle``)."""
        self._publishing = threading.BoundedSemaphore(PUBLISHING_AT_ONCE)
        """An archive being published is held in memory (upload, content, members): a few
        at once, so concurrent uploads cannot exhaust the server's memory."""

    @property
    def platform(self) -> Platform:
        """The platform, opened on first use so building the app never opens a store."""
        with self._lock:
            if self._platform is None:
                self._platform = Platform.open(self.config)
            return self._platform

    @property
    def identity(self) -> Identity:
        """Tokens and sessions over the same platform."""
        return Identity(self.platform)

    def close(self) -> None:
        """Close the store if it was opened."""
        with self._lock:
            if self._platform is not None:
                self._platform.close()
                self._platform = None

    # ------------------------------------------------------------------ problems

    def problem_ids(self) -> list[str]:
        """Every published problem's id, sorted."""
        return sorted({e.subject for e in self.platform.ledger.find(kind=PROBLEM)})

    def problems(self) -> list[dict[str, Any]]:
        """The problem list's rows (a problem that cannot be read is left out)."""
        out = []
        for pid in self.problem_ids():
            try:
                view = self.platform.problem(pid)
            except InvalidInput:
                continue
            out.append({"problem": pid, "title": view.title, "revision": view.revision})
        return out

    def managers(self, problem: str) -> list[str]:
        """Who manages ``problem``, as its publication recorded (empty for an unknown problem)."""
        found = self.platform.ledger.find(kind=PROBLEM, subject=problem)
        return list(found[0].body["managers"]) if found else []

    def managed_by(self, user: str) -> list[str]:
        """The problems ``user`` manages, sorted."""
        return sorted(
            e.subject for e in self.platform.ledger.find(kind=PROBLEM) if user in e.body["managers"]
        )

    def problem(self, problem: str) -> ProblemView:
        """The problem's view, or 404 (the same answer for unknown and unreadable)."""
        try:
            return self.platform.problem(problem)
        except InvalidInput:
            raise Refused(404, NOT_FOUND) from None

    def revision(self, rid: str) -> Revision:
        """A revision by id, or 404."""
        found = self.platform.ledger.find(kind=REVISION, subject=rid)
        if not found:
            raise Refused(404, NOT_FOUND)
        return Revision.model_validate(found[-1].body)

    def statement(self, problem: str) -> str:
        """The current revision's statement text."""
        revision = self.revision(self.problem(problem).revision)
        data = self.platform.ledger.blobs.read(revision.statement.sha256)
        return data.decode("utf-8", "replace")

    def skill(self, problem: str, path: str) -> bytes:
        """A skill document's bytes from the current revision, or 404."""
        revision = self.revision(self.problem(problem).revision)
        binding = revision.skills.get(path)
        if binding is None:
            raise Refused(404, NOT_FOUND)
        return self.platform.ledger.blobs.read(binding.sha256)

    def reference(self, problem: str, key: str, user: str) -> bytes:
        """A reference's bytes: a sealed one only to the problem's managers until it unseals."""
        revision = self.revision(self.problem(problem).revision)
        binding = revision.references.get(key)
        if binding is None:
            raise Refused(404, NOT_FOUND)
        until = revision.unseals_at(key)
        sealed = until is not None and self.platform.clock() < until
        if sealed and user not in self.managers(problem):
            assert until is not None
            raise Refused(403, f"reference {key!r} is sealed until {until.isoformat()}; not served")
        return self.platform.ledger.blobs.read(binding.sha256)

    def allowance(self, problem: str, user: str) -> dict[str, Any]:
        """The viewer's allowance on ``problem`` and when the next slot frees."""
        self.problem(problem)
        return self.platform.allowance(problem, user)

    # ------------------------------------------------------------------ submissions

    def submit(
        self, problem: str, user: str, files: Mapping[str, bytes], summary: str | None
    ) -> RunView:
        """Submit uploaded files (one per role) as ``user``."""
        self.problem(problem)
        with tempfile.TemporaryDirectory(prefix="assay-upload-") as tmp:
            paths: dict[str, Path] = {}
            for index, (role, data) in enumerate(sorted(files.items())):
                path = Path(tmp) / f"upload-{index}"
                path.write_bytes(data)
                paths[role] = path
            try:
                return self.platform.submit(problem, paths, summary, user)
            except AllowanceUsed as exc:
                raise Refused(429, str(exc)) from None
            except InvalidInput as exc:
                raise Refused(422, str(exc)) from None

    def _contract_of(self, submission: str) -> tuple[Revision, Contract | None, str]:
        """The revision a submission was made under, its contract and the participant; 404
        for an unknown id (a submission owned by a campaign included)."""
        made = self.platform.ledger.find(kind=SUBMISSION, subject=submission)
        if not made:
            raise Refused(404, NOT_FOUND)
        revision = self.revision(made[0].body["revision"])
        found = self.platform.ledger.find(kind=CONTRACT, subject=revision.contract or "")
        contract = Contract.model_validate(found[0].body) if found else None
        return revision, contract, str(made[0].body["participant"])

    def submission(self, submission: str, user: str) -> SubmissionView:
        """The submission as ``user`` may see it; 404 when they may not (as for an unknown id)."""
        try:
            return self.platform.show(submission, user)
        except (InvalidInput, StopIteration):
            raise Refused(404, NOT_FOUND) from None

    def recheck(self, submission: str, user: str) -> RunView:
        """A re-check by ``user``, refused as not found when they cannot see the submission."""
        self.submission(submission, user)  # not visible: not found, before anything else
        try:
            return self.platform.recheck(submission, user)
        except InvalidInput:
            raise Refused(403, "only the problem's managers re-check a submission") from None

    # ------------------------------------------------------------------ external stages

    def external_forms(self, submission: str, user: str) -> dict[str, ExternalForm]:
        """The external stages of the submission's contract that ``user`` is named to conclude
        (the party of a party stage, a supplier of a rule stage's evidence; never the
        submission's own participant). This only decides which forms to offer: the platform
        applies its rule again when recording (``Platform.record_external``)."""
        revision, contract, participant = self._contract_of(submission)
        forms = {}
        for stage in contract.stages if contract else []:
            if not isinstance(stage, ExternalStage) or user == participant:
                continue
            named = (
                stage.party == user
                if stage.mechanism == "party"
                else user in (stage.supplied_by or [])
            )
            if named:
                forms[stage.name] = ExternalForm(submission, revision.problem, participant, stage)
        return forms

    def external_form(self, submission: str, stage: str, user: str) -> ExternalForm:
        """The form of one stage ``user`` is named to conclude; 404 for anyone else (whether
        the submission or the stage exists is not said)."""
        try:
            return self.external_forms(submission, user)[stage]
        except KeyError:
            raise Refused(404, NOT_FOUND) from None

    def record_external(
        self,
        submission: str,
        stage: str,
        user: str,
        *,
        evidence: bytes | None = None,
        status: Status | None = None,
        reason: str | None = None,
    ) -> RunView:
        """Conclude the external stage as ``user`` (``Platform.record_external``); a refusal
        keeps the platform's message and the option it names (``--evidence``, ``--result``)."""
        try:
            return self.platform.record_external(
                submission, stage, user, evidence=evidence, status=status, reason=reason
            )
        except InvalidInput as exc:
            try:  # a submission this user may not see: not found, whatever the reason
                self.submission(submission, user)
            except Refused:
                if stage not in self.external_forms(submission, user):
                    raise
            raise Refused(422, str(exc)) from None

    def recorded_for(self, view: RunView, stage: str, user: str) -> dict[str, Any]:
        """What the one who recorded ``stage`` is answered: the run as they may see it, or,
        when they may not see the submission (a supplier under independent entry, results
        held), only the stage they concluded, never the run's other stages or artifacts."""
        try:
            self.submission(view.submission, user)
        except Refused:
            concluded = next(s for s in view.stages if s.name == stage)
            return {
                "schema": "assay.external-recorded/1",
                "submission": view.submission,
                "stage": stage,
                "status": concluded.status.value if concluded.status else None,
                "detail": concluded.detail,
            }
        return view.to_json()

    # ------------------------------------------------------------------ publishing

    def archive_limits(self) -> ArchiveLimits:
        """The caps on an uploaded problem archive (no more than the staging cap)."""
        staged = self.config.max_staged_mb * 1024 * 1024
        return ArchiveLimits(total_bytes=min(ArchiveLimits.total_bytes, staged))

    def publish(self, data: bytes, user: str) -> Published:
        """Publish the problem folder an uploaded ``.tar.gz`` or ``.zip`` holds, as ``user``:
        extracted safely into a fresh scratch folder, then the platform's publish, exactly as
        ``assay problem publish FOLDER`` (a new problem makes ``user`` its manager; a new
        revision needs ``user`` to manage the problem). 422 names what is wrong; 403 when
        ``user`` does not manage the problem."""
        if not self._publishing.acquire(blocking=False):
            raise Refused(
                429,
                f"{PUBLISHING_AT_ONCE} problems are being published now; try again in a moment",
            )
        try:
            return publish_archive(self.platform, data, user, self.archive_limits())
        except InvalidInput as exc:
            if exc.where == "--as":
                raise Refused(403, str(exc).removeprefix("--as: ")) from None
            raise Refused(422, str(exc)) from None
        finally:
            self._publishing.release()

    # ------------------------------------------------------------------ review

    def seat_page(self, seat: str, user: str) -> SeatPage:
        """The seat ``user`` holds or answered, with its materials (their text when short)."""
        parsed = parse_seat(seat)
        if parsed is None:
            raise Refused(404, NOT_FOUND)
        submission, _run, stage, node_name, _ = parsed
        if self.platform.reviews.campaigns.owns(submission):  # a campaign item's seat
            from assay.web._campaigns import campaign_seat

            problem, node, mine = campaign_seat(self, seat, user)
        else:
            problem, node, mine = self._stage_seat(seat, submission, stage, node_name, user)
        materials = []
        for m in mine.shown:
            text = None
            if m.size <= 64 * 1024 and not m.what.startswith("the submission's folder"):
                try:
                    text = self.material(seat, m.uri, user).decode("utf-8")
                except (Refused, UnicodeDecodeError):
                    text = None
                if text is not None and m.uri.startswith("assay://review/"):
                    text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
            materials.append({**m.to_json(), "text": text})
        return SeatPage(
            seat=seat,
            problem=problem,
            node=node,
            node_name=node_name,
            state=mine.state,
            until=mine.until,
            materials=materials,
            response=mine.response,
        )

    def _stage_seat(
        self, seat: str, submission: str, stage: str, node_name: str, user: str
    ) -> tuple[str, ReviewNode, Any]:
        """A review stage's seat ``user`` holds or answered: its problem, node and record."""
        try:
            record = self.platform.reviews.show(submission, user)
        except (InvalidInput, StopIteration):
            raise Refused(404, NOT_FOUND) from None
        mine = None
        for review in record.reviews:
            for found_node in review.nodes:
                for s in found_node.seats:
                    if s.seat == seat and s.user == user:
                        mine = s
        if mine is None:
            raise Refused(404, NOT_FOUND)
        revision, contract, _ = self._contract_of(submission)
        if contract is None:
            raise Refused(404, NOT_FOUND)
        found = next(s for s in contract.stages if isinstance(s, ReviewStage) and s.name == stage)
        return revision.problem, parse_protocol(found.protocol).review(node_name), mine

    def material(self, seat: str, uri: str, user: str) -> bytes:
        """A material of a seat ``user`` holds; 404 for anything else, whatever the reason."""
        try:
            return self.platform.reviews.material(seat, uri, user)
        except (InvalidInput, StopIteration):
            raise Refused(404, NOT_FOUND) from None

    # ------------------------------------------------------------------ managing

    def runs_by_checker(self, user: str) -> dict[str, dict[str, Any]]:
        """Every checker that judged a run on a problem ``user`` manages: its runs (newest
        last) and, when revoked, why."""
        mine = set(self.managed_by(user))
        checkers: dict[str, dict[str, Any]] = {}
        for entry in self.platform.ledger.find(kind=STAGE):
            if entry.problem not in mine:
                continue
            for checker in entry.body.get("checkers", []):
                row = checkers.setdefault(checker, {"runs": [], "revoked": None})
                row["runs"].append(
                    {
                        "submission": entry.subject,
                        "problem": entry.problem,
                        "run": entry.body.get("run"),
                        "stage": entry.body.get("name"),
                        "status": entry.body.get("status"),
                    }
                )
        for entry in self.platform.ledger.find(kind=REVOKED):
            if entry.subject in checkers and mine & set(entry.body.get("problems", [])):
                checkers[entry.subject]["revoked"] = entry.body.get("why")
        return dict(sorted(checkers.items()))
