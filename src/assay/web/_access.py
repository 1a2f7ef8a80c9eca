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
    Contract,
    Platform,
    ProblemView,
    ReviewStage,
    Revision,
    RunView,
    SubmissionView,
)
from assay.review import ReviewNode, parse_protocol, parse_seat
from assay.web._identity import Identity

# The platform's entry kinds this module reads (``assay.platform`` writes them).
PROBLEM = "problem.published"
REVISION = "revision.published"
CONTRACT = "contract.published"
SUBMISSION = "submission.made"
STAGE = "stage.concluded"
REVOKED = "checker.revoked"

NOT_FOUND = "not found (or not yours to see)"


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


class Web:
    """The platform the pages and the API share (opened on first use), and the identity."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._platform: Platform | None = None
        self._lock = threading.Lock()

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

    # ------------------------------------------------------------------ review

    def seat_page(self, seat: str, user: str) -> SeatPage:
        """The seat ``user`` holds or answered, with its materials (their text when short)."""
        parsed = parse_seat(seat)
        if parsed is None:
            raise Refused(404, NOT_FOUND)
        submission, _run, stage, node_name, _ = parsed
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
        made = self.platform.ledger.find(kind=SUBMISSION, subject=submission)
        revision = self.revision(made[0].body["revision"])
        contract = Contract.model_validate(
            self.platform.ledger.find(kind=CONTRACT, subject=revision.contract)[0].body
        )
        found = next(s for s in contract.stages if isinstance(s, ReviewStage) and s.name == stage)
        node = parse_protocol(found.protocol).review(node_name)
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
            problem=revision.problem,
            node=node,
            node_name=node_name,
            state=mine.state,
            until=mine.until,
            materials=materials,
            response=mine.response,
        )

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
