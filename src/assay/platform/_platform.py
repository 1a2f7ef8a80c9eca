"""The platform: problems are published, submissions are judged under the revision they were
made under, and every fact goes into the one ledger, where it is never edited.

Each operation reads what it needs from the ledger and appends what happened. A run is written in
two transactions: the submission with the start of its run, then every stage's conclusion with
the run's end; a process killed in between leaves a run that the next start records as
``error`` ("interrupted"), and nothing submitted is lost.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import secrets
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay._config import Config
from assay._errors import InvalidInput
from assay.ledger import Blob, ChainReport, Entry, Ledger, LedgerError, NewEntry, Reader
from assay.platform import _records as r
from assay.platform._allowance import AllowanceUsed, next_slot, window_start
from assay.platform._contract import NAME, Contract, ExternalStage
from assay.platform._evaluate import Inputs, Progress, evaluate
from assay.platform._external import apply_rule
from assay.platform._folder import load_folder
from assay.platform._owner import gone, me
from assay.platform._problem_view import problem_view
from assay.platform._publish import bind, lay_out, run_conformance
from assay.platform._read import History, ViewContext, run_view, submission_view
from assay.platform._reviews import Reviews
from assay.platform._revision import Revision
from assay.platform._views import ProblemView, Published, Revocation, RunView, SubmissionView
from assay.review import fold
from assay.sandbox import MAX_DEPTH, MAX_ENTRIES
from assay.status import Status

MAX_RELATIVE_PATH = 1024
"""Longest path inside a submitted folder: laid out again under a run's workspace it must still
fit the system's path limit, or the work could make its own run fail (an ``error``, which costs
no allowance)."""
MAX_SUMMARY = 1024 * 1024
"""A summary is an answer, not a file: a larger one is refused at the door."""


def now() -> datetime:
    """The wall clock, in UTC (tests inject their own)."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A fresh, unguessable id (a participant must not be able to name another's submission by
    counting): 64 random bits, drawn from the system's generator a batch at a time."""
    global _random
    with _random_lock:
        pid, left = _random
        if pid != os.getpid() or not left:  # a forked child never reuses its parent's bytes
            pid, left = os.getpid(), secrets.token_bytes(8 * 256)
        _random = (pid, left[8:])
    return f"{prefix}-{left[:8].hex()}"


_random_lock = threading.Lock()
_random: tuple[int, bytes] = (0, b"")
"""This process's random bytes not yet used for an id (one draw serves 256 ids)."""


def person(name: str, where: str = "--as") -> str:
    """A participant or manager name, checked."""
    if not NAME.fullmatch(name):
        raise InvalidInput(
            f"{name!r} is not a user name (letters, digits, _ . -, at most 64)", where=where
        )
    return name


class Platform:
    """Problems, submissions and runs over one ledger, with an injectable clock."""

    def __init__(self, ledger: Ledger, config: Config, clock: Callable[[], datetime] = now):
        self.ledger = ledger
        self.config = config
        self.clock = clock
        self._scratch = Path(tempfile.mkdtemp(prefix="assay-platform-"))
        self._references: dict[str, Path] = {}
        self._documents: dict[tuple[str, str], dict[str, Any]] = {}
        self._parsed: dict[str, Revision | Contract] = {}
        self._manager_cache: dict[str, list[str]] = {}
        self._conformed_cache: dict[str, set[str]] = {}

    @classmethod
    def open(
        cls, config: Config | None = None, clock: Callable[[], datetime] | None = None
    ) -> Platform:
        """The platform over ``config.db``; runs left in flight by dead processes become
        ``error`` ("interrupted")."""
        config = config or Config.from_env()
        platform = cls(Ledger.open(config), config, clock or now)
        platform.sweep()
        return platform

    @functools.cached_property
    def reviews(self) -> Reviews:
        """The review side: users, seats, claims, responses (``assay review``)."""
        return Reviews(self)

    def close(self) -> None:
        """Close the ledger and remove the scratch folder."""
        shutil.rmtree(self._scratch, ignore_errors=True)
        self.ledger.close()

    def __enter__(self) -> Platform:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- publishing

    def publish(self, folder: Path, by: str) -> Published:
        """Publish a problem folder; the same folder again stores nothing new (same ids)."""
        person(by)
        draft = load_folder(folder)
        managers = self._managers(draft.problem)
        if managers and by not in managers:
            raise InvalidInput(
                f"{by!r} does not manage problem {draft.problem!r} (managers: "
                f"{', '.join(managers)})",
                where="--as",
            )
        contract = draft.contract
        if contract is not None and contract.verifier is not None:
            self._may_name_verifier(contract.verifier, by)
        revision = bind(draft, self.ledger.blobs, self.config.max_staged_mb * 1024 * 1024)
        rid = revision.id
        entries: list[NewEntry] = []
        at = self.clock()
        if not managers:
            body = r.ProblemRecord(problem=draft.problem, managers=[by])
            entries.append(self._entry(r.PROBLEM, draft.problem, body, at, draft.problem))
        if contract is not None and not self.ledger.find(kind=r.CONTRACT, subject=contract.id):
            entries.append(self._entry(r.CONTRACT, contract.id, contract, at, draft.problem))
        new = not self.ledger.find(kind=r.REVISION, subject=rid)
        current = not new and self._revisions(draft.problem)[-1].subject == rid
        conformance: list[dict[str, Any]] = []
        # the revision's body is the revision (its id is the body's digest); who published it
        # is the entry's participant column, the one indexed name an entry carries
        if not new and not current:  # an earlier revision, published again: current again
            entries.append(self._entry(r.REVISION, rid, revision, at, draft.problem, by))
        if new:
            entries.append(self._entry(r.REVISION, rid, revision, at, draft.problem, by))
            if contract is not None:
                with tempfile.TemporaryDirectory(dir=self._scratch) as tmp:
                    records = run_conformance(
                        contract, revision, rid, self.config, self.ledger.blobs, Path(tmp)
                    )
                for record in records:
                    conformance.append(record.to_json())
                    entries.append(self._entry(r.CONFORMANCE, rid, record, at, draft.problem))

        def still_managed_so(find: Reader) -> None:
            """Read again inside the write: two first publishes of one new id cannot both
            become its managers."""
            found = find(kind=r.PROBLEM, subject=draft.problem)
            if found and by not in found[0].body["managers"]:
                raise InvalidInput(
                    f"{by!r} does not manage problem {draft.problem!r} (managers: "
                    f"{', '.join(found[0].body['managers'])})",
                    where="--as",
                )
            if found and not managers:
                raise InvalidInput(
                    f"problem {draft.problem!r} was published by someone else meanwhile; "
                    "publish again",
                    where="--as",
                )

        if entries:
            self.ledger.append(*entries, guard=still_managed_so)
        return Published(
            problem=draft.problem,
            revision=rid,
            contract=contract.id if contract else None,
            new=new,
            current_again=not new and not current,
            conformance=conformance,
        )

    def problem(self, problem: str) -> ProblemView:
        """The current revision's verification process, before anyone starts."""
        revisions = self._revisions(problem)
        entry = revisions[-1]
        revision = Revision.model_validate(entry.body)
        contract = self._contract(revision.contract) if revision.contract else None
        count = len({e.subject for e in revisions})
        return problem_view(revision, entry.subject, contract, count, entry.at, entry.participant)

    # ---------------------------------------------------------------- submitting

    def submit(
        self,
        problem: str,
        artifacts: Mapping[str, Path],
        summary: str | None,
        participant: str,
        attempt: str | None = None,
    ) -> RunView:
        """Submit work to the problem's current revision and evaluate it.

        AllowanceUsed when the window is full (nothing is recorded); InvalidInput naming the role
        for a missing, unknown or oversized artifact (recorded as refused: it counts)."""
        work = Work(participant=participant, artifacts=artifacts, summary=summary, attempt=attempt)
        result = self.submit_many(problem, [work])[0]
        if isinstance(result, InvalidInput):
            raise result
        return result

    def submit_many(self, problem: str, works: Sequence[Work]) -> list[RunView | InvalidInput]:
        """Submit several pieces of work to the problem's current revision: one result each, in
        order (its run, or the refusal), in two transactions for the whole batch.

        Each is treated exactly as ``submit`` treats it (allowance, roles, a run of its own); a
        batch is how a training loop records many rollouts without paying a commit for each.
        When another process changed what the batch was decided on (an allowance filled, bytes
        withdrawn) between the decision and the write, the batch is decided again: each item
        still gets its own result."""
        for _ in range(3):
            try:
                with _paused_cycle_collector():
                    return self._submit_once(problem, works)
            except _Raced:
                continue
        raise LedgerError(f"the store kept changing under a batch for {problem!r}; try again")

    def _submit_once(self, problem: str, works: Sequence[Work]) -> list[RunView | InvalidInput]:
        if not isinstance(problem, str):
            raise InvalidInput("must be a problem id", where="PROBLEM")
        entry = self._revisions(problem)[-1]
        rid = entry.subject
        revision = self._revision(rid, entry.body)
        contract = self._contract(revision.contract) if revision.contract else None
        at = self.clock()
        owner = me().to_json()
        allowance = revision.policy.allowance
        results: list[RunView | InvalidInput | None] = [None] * len(works)
        batch: dict[str, int] = {}  # participant -> items of this batch that count
        seen: dict[str, list[Entry]] = {}
        attempts: dict[tuple[str, str | None], str] = {}
        entries: list[NewEntry] = []
        admitted: list[tuple[int, r.SubmissionRecord, str]] = []
        readers = self.reviews.readers(problem, revision, at)  # reviewers kept out for now
        for index, work in enumerate(works):
            try:
                person(work.participant)
                if readers and fold(work.participant) in readers:
                    raise InvalidInput(readers[fold(work.participant)], where="--as")
                if allowance is not None:
                    if work.participant not in seen:
                        seen[work.participant] = self.ledger.find(
                            kind=_COUNTED,
                            problem=problem,
                            participant=work.participant,
                            since=window_start(allowance, at),
                        )
                    slot = next_slot(
                        allowance, seen[work.participant], at, batch.get(work.participant, 0)
                    )
                    if slot is not None:
                        raise AllowanceUsed(allowance, slot)
                key = (work.participant, work.attempt)
                if key not in attempts or work.attempt == "new":
                    attempts[key] = self._attempt(problem, work.participant, work.attempt)
                attempt = attempts[key]
                attempts[(work.participant, None)] = attempt  # the latest, as `submit` sees it
            except InvalidInput as exc:
                results[index] = exc
                continue
            batch[work.participant] = batch.get(work.participant, 0) + 1
            submission = new_id("s")
            problems = _refusals(contract, work.artifacts, work.summary)
            if problems:
                body = r.RefusedRecord(
                    submission=submission,
                    problem=problem,
                    participant=work.participant,
                    reason="; ".join(problems),
                )
                entries.append(
                    self._entry(r.REFUSED, submission, body, at, problem, work.participant)
                )
                results[index] = InvalidInput("; ".join(problems), where="--artifact")
                continue
            try:
                stored = self._store(contract, work.artifacts)
            except InvalidInput as exc:  # the bytes changed or cannot be stored: refused
                body = r.RefusedRecord(
                    submission=submission,
                    problem=problem,
                    participant=work.participant,
                    reason=str(exc),
                )
                entries.append(
                    self._entry(r.REFUSED, submission, body, at, problem, work.participant)
                )
                results[index] = exc
                continue
            record = r.built(  # every value checked above or drawn here
                r.SubmissionRecord,
                submission=submission,
                attempt=attempt,
                problem=problem,
                revision=rid,
                participant=work.participant,
                artifacts=stored,
                summary=work.summary,
            )
            run = new_id("r")
            started = r.started_body(run, submission, rid, revision.contract, owner, False)
            entries.append(
                _trusted(r.SUBMISSION, submission, record, at, problem, work.participant)
            )
            entries.append(
                _trusted(r.RUN_STARTED, submission, started, at, problem, work.participant)
            )
            admitted.append((index, record, run))

        def unchanged(find: Reader) -> None:
            """Read again inside the append's transaction: the allowance still admits every
            item, and every stored byte is still there (a withdrawal deletes under the same
            lock), and no drawn submission id is recorded already (64 random bits repeat
            only by a broken generator, but a repeat would merge two histories: ``History``
            reads every entry of a subject). Otherwise the batch is decided again (``_Raced``)
            with fresh ids."""
            for entry in entries:
                if entry.kind in (r.SUBMISSION, r.REFUSED) and find(
                    subject=entry.subject, newest=1
                ):
                    raise _Raced
            for _, record, _ in admitted:
                for artifact in record.artifacts:
                    if not self.ledger.blobs.has(artifact.sha256):
                        raise _Raced
                    if artifact.tree and not all(
                        map(self.ledger.blobs.has, self._tree_files(artifact.sha256))
                    ):
                        raise _Raced
            if allowance is None:
                return
            for participant, count in batch.items():
                counted = find(
                    kind=_COUNTED,
                    problem=problem,
                    participant=participant,
                    since=window_start(allowance, at),
                )
                if next_slot(allowance, counted, at, count - 1) is not None:
                    raise _Raced

        appended = self.ledger.append(*entries, guard=unchanged)
        by_subject: dict[str, list[Entry]] = {}
        for written in appended:
            by_subject.setdefault(written.subject, []).append(written)
        views = self._conclude(
            [
                (record, run, revision, contract, 0, by_subject[record.submission])
                for _, record, run in admitted
            ]
        )
        for (index, _, _), view in zip(admitted, views, strict=True):
            results[index] = view
        return [result for result in results if result is not None]

    def _store(
        self, contract: Contract | None, artifacts: Mapping[str, Path]
    ) -> list[r.ArtifactRecord]:
        """Store each artifact's bytes (capped by its role) and say what was stored."""
        stored = []
        for role, path in sorted(artifacts.items()):
            declared = contract.role(role) if contract else None
            cap = declared.max_bytes if declared else self.config.max_staged_mb * 1024 * 1024
            tree = path.is_dir()
            blob: Blob = (
                self.ledger.blobs.put_tree(path, cap)
                if tree
                else self.ledger.blobs.put_file(path, cap)
            )
            stored.append(
                r.ArtifactRecord(role=role, sha256=blob.sha256, size=blob.size, tree=tree)
            )
        return stored

    def recheck(self, submission: str, by: str) -> RunView:
        """A new run of the submission under its own revision (runs are never edited)."""
        history = self._history(submission)
        self._may_act(history, by)
        sub = history.submission
        revision = self._revision(sub.revision)
        contract = self._contract(revision.contract) if revision.contract else None
        run = new_id("r")
        started = r.RunStartedRecord(
            run=run,
            submission=submission,
            revision=sub.revision,
            contract=revision.contract,
            owner=me(),
            recheck=True,
        )
        known = history.entries + self.ledger.append(
            self._entry(
                r.RUN_STARTED, submission, started, self.clock(), sub.problem, sub.participant
            )
        )
        view = self._conclude([(sub, run, revision, contract, 0, known)])[0]
        # a review stage this submission already passed through carries its conclusion over
        return (self.reviews.advance(submission) or view) if view.status is None else view

    def _conclude(self, runs: Sequence[_Pending]) -> list[RunView]:
        """Evaluate each run's stages from its ``start`` and append every conclusion and each
        run's end (or its wait) in one transaction. ``known``: each submission's entries so
        far, so the views are built without reading them back."""
        revocations = self.ledger.find(kind=r.REVOKED)
        revoked_in: dict[str, dict[str, str]] = {}  # problem -> checker -> why
        entries: list[NewEntry] = []
        for sub, run, revision, contract, start, known in runs:
            withdrawn = {e.body["artifact"]["role"] for e in known if e.kind == r.WITHDRAWN}
            if sub.problem not in revoked_in:
                revoked_in[sub.problem] = {
                    e.subject: e.body["why"] for e in revocations if r.revokes(e.body, sub.problem)
                }
            try:
                progress = self._evaluate(
                    sub, run, revision, contract, start, revoked_in[sub.problem], withdrawn
                )
            except Exception as exc:  # assay's machinery, never the work: recorded, not lost
                progress = Progress(stages=[])
                failure: str | None = (
                    f"verification error: {type(exc).__name__} inside assay while evaluating"
                )
            else:
                failure = None
            at = self.clock()
            for stage in progress.stages:
                entries.append(
                    _trusted(r.STAGE, sub.submission, stage, at, sub.problem, sub.participant)
                )
            if progress.awaiting is not None:
                entries.append(
                    _trusted(
                        r.AWAITING,
                        sub.submission,
                        progress.awaiting,
                        at,
                        sub.problem,
                        sub.participant,
                    )
                )
            else:
                status, detail = (Status.ERROR, failure) if failure else progress.final  # type: ignore[misc]
                finished = r.finished_body(run, sub.submission, status, detail, False)
                entries.append(
                    _trusted(r.FINISHED, sub.submission, finished, at, sub.problem, sub.participant)
                )
        appended: dict[str, list[Entry]] = {}
        for stored in self.ledger.append(*entries):
            appended.setdefault(stored.subject, []).append(stored)
        views = []
        contexts: dict[tuple[str, str], ViewContext] = {}
        for sub, run, _, _, _, known in runs:
            history = History(known + appended.get(sub.submission, []), revocations, sub)
            seen_as = (sub.revision, sub.participant)
            if seen_as not in contexts:
                contexts[seen_as] = self._view_context(history, sub.participant)
            views.append(run_view(history, run, contexts[seen_as]))
        return views

    def _evaluate(
        self,
        sub: r.SubmissionRecord,
        run: str,
        revision: Revision,
        contract: Contract | None,
        start: int,
        revoked: dict[str, str],
        withdrawn: set[str],
    ) -> Progress:
        if contract is None:
            return Progress(stages=[], record_only=True)
        inputs = Inputs(
            run=run,
            contract=contract,
            revision=revision,
            references=self._reference_folder(sub.revision, revision),
            workspace=None,
            summary=sub.summary,
            artifacts={a.role: a.sha256 for a in sub.artifacts},
            config=self.config,
            clock=self.clock,
            conformed=self._conformed(sub.revision),
            revoked=revoked,
            withdrawn={a.role for a in sub.artifacts if a.role in withdrawn},
        )
        if not contract.roles:  # judged on the summary alone: nothing to lay out
            return evaluate(inputs, start)
        with tempfile.TemporaryDirectory(dir=self._scratch) as tmp:
            inputs.workspace = Path(tmp) / "workspace"
            inputs.workspace.mkdir()
            for artifact in sub.artifacts:
                if artifact.role not in withdrawn:
                    self.ledger.blobs.materialize(
                        artifact.sha256, inputs.workspace / artifact.role, tree=artifact.tree
                    )
            return evaluate(inputs, start)

    def _reference_folder(self, rid: str, revision: Revision) -> Path:
        """The revision's references laid out as ``{key}``, once per platform (read-only)."""
        folder = self._references.get(rid)
        if folder is None:
            folder = lay_out(revision, self.ledger.blobs, self._scratch / f"references-{rid[:16]}")
            self._references[rid] = folder
        return folder

    # ---------------------------------------------------------------- external stages

    def record_external(
        self,
        submission: str,
        stage: str,
        by: str,
        *,
        evidence: bytes | None = None,
        status: Status | None = None,
        reason: str | None = None,
    ) -> RunView:
        """Conclude the external stage a run of ``submission`` waits at, and carry on.

        Who may record is decided from the contract before any run is looked at, so someone
        who may not record learns nothing (not even whether a run reached the stage)."""
        person(by)
        history = self._history(submission)
        sub = history.submission
        revision = self._revision(sub.revision)
        contract = self._contract(revision.contract) if revision.contract else None
        found = [
            (i, s)
            for i, s in enumerate(contract.stages if contract else [])
            if s.name == stage and isinstance(s, ExternalStage)
        ]
        if contract is None or not found:
            raise InvalidInput(
                f"{sub.problem!r} has no external stage {stage!r} in this submission's revision",
                where="--stage",
            )
        index, definition = found[0]
        assert isinstance(definition, ExternalStage)
        _may_record(definition, by, sub.participant)
        checker = external_checker(definition, contract.id)
        run = history.waiting_at(stage)
        if run is None:
            raise InvalidInput(f"no run of {submission} waits at stage {stage!r}", where="--stage")
        at = self.clock()
        evidence_sha = None
        if definition.mechanism == "rule":
            if evidence is None or status is not None:
                raise InvalidInput(
                    "a rule stage takes --evidence FILE (assay applies the rule), not --result",
                    where="--evidence",
                )
            assert definition.evidence_schema is not None
            concluded, detail = apply_rule(
                definition.evidence_schema,
                evidence,
                self.config,
                definition.binds,
                {a.role: a for a in sub.artifacts},
                self.ledger.blobs.read,
                self._withdrawn(submission),
            )
            evidence_sha = self.ledger.blobs.put_bytes(evidence).sha256
        else:
            if status is None or status is Status.ERROR or not reason or evidence is not None:
                raise InvalidInput(
                    "a party stage takes --result verified|refuted|inconclusive and --reason",
                    where="--result",
                )
            concluded, detail = status, reason
        revoked = {
            e.subject: e.body["why"]
            for e in self.ledger.find(kind=r.REVOKED)
            if r.revokes(e.body, sub.problem)
        }
        if checker in revoked:  # as a revoked check's outcome is gated: it concludes nothing
            concluded, detail = (
                Status.INCONCLUSIVE,
                f"the checker {checker} was revoked ({revoked[checker]}); it no longer concludes "
                f"anything (it said: {concluded.value})",
            )
        external = r.ExternalRecord(
            run=run,
            stage=stage,
            mechanism=definition.mechanism,
            by=by,
            status=concluded,
            reason=detail,
            evidence_sha256=evidence_sha,
        )
        stage_record = r.StageRecord(
            run=run,
            name=stage,
            type="external",
            status=concluded,
            detail=detail,
            mechanism=definition.mechanism,
            checkers=[checker],
            inputs={"evidence": evidence_sha} if evidence_sha else {},
            started=history.awaiting_since(run) or at,
            finished=at,
            recorded_by=by,
        )
        waiting = history.state(run).seq

        def still_waiting(find: Reader) -> None:
            """Read again inside the write: two records racing for one waiting run cannot
            both conclude it."""
            states = (r.RUN_STARTED, r.RESUMED, r.AWAITING, r.FINISHED)
            now = [e for e in find(kind=states, subject=submission) if e.body["run"] == run]
            if now[-1].seq != waiting:
                raise InvalidInput(
                    f"stage {stage!r} of {submission} was concluded meanwhile (by another "
                    "record); nothing was recorded",
                    where="--stage",
                )

        before = [self._entry(r.EXTERNAL, submission, external, at, sub.problem, sub.participant)]
        return self._conclude_waiting(history, index, stage_record, before, still_waiting)

    def _conclude_waiting(
        self,
        history: History,
        index: int,
        stage: r.StageRecord,
        before: list[NewEntry],
        guard: Callable[[Reader], None],
    ) -> RunView:
        """Conclude the stage ``index`` a run waits at (an external record, a review's outcome):
        ``before`` and the stage's record, the run resumed, and its end when the stage did not
        pass, in one append under ``guard`` (which refuses a second conclusion); a passed stage
        carries the run on to the next stages, as a first evaluation would."""
        sub = history.submission
        submission, run, at = sub.submission, stage.run, stage.finished
        revision = self._revision(sub.revision)
        contract = self._contract(revision.contract) if revision.contract else None
        before = [
            *before,
            self._entry(r.STAGE, submission, stage, at, sub.problem, sub.participant),
        ]
        resumed = r.ResumedRecord(run=run, stage=stage.name, owner=me())
        before.append(self._entry(r.RESUMED, submission, resumed, at, sub.problem, sub.participant))
        if stage.status is not Status.VERIFIED:
            finished = r.FinishedRecord(
                run=run,
                submission=submission,
                status=stage.status,
                detail=f"stage {stage.name!r}: {stage.detail}",
            )
            before.append(
                self._entry(r.FINISHED, submission, finished, at, sub.problem, sub.participant)
            )
            history = History(
                history.entries + self.ledger.append(*before, guard=guard),
                history.revocations,
            )
            return run_view(history, run, self._view_context(history, sub.participant))
        known = history.entries + self.ledger.append(*before, guard=guard)
        return self._conclude([(sub, run, revision, contract, index + 1, known)])[0]

    # ---------------------------------------------------------------- records about records

    def revoke(self, checker: str, why: str, by: str) -> Revocation:
        """Revoke every run ``checker`` produced on the problems ``by`` manages: still readable,
        marked, no longer counted; there it concludes nothing afterwards. Other managers'
        problems are theirs to decide."""
        person(by)
        if not why.strip():
            raise InvalidInput("say why the checker is revoked", where="--why")
        stages = [
            e for e in self.ledger.find(kind=r.STAGE) if checker in e.body.get("checkers", [])
        ]
        if not stages and not checker.startswith(
            ("assay:", "program:", "rule:", "party:", "review:")
        ):
            raise InvalidInput(
                f"{checker!r} produced no run and is not a checker id (assay:KIND@VERSION, "
                "program:SHA256, rule:..., party:NAME, review:CONTRACT/STAGE)",
                where="--checker",
            )
        mine = sorted(
            e.subject for e in self.ledger.find(kind=r.PROBLEM) if by in e.body["managers"]
        )
        if not mine:
            raise InvalidInput(
                f"{by!r} manages no problem here; a revocation covers the problems its author "
                "manages",
                where="--as",
            )
        body = r.RevokedRecord(checker=checker, why=why, by=by, problems=mine)
        self.ledger.append(self._entry(r.REVOKED, checker, body, self.clock()))
        runs = sorted({e.body["run"] for e in stages if e.problem in mine})
        return Revocation(checker=checker, why=why, runs=runs)

    def withdraw(self, submission: str, role: str, by: str) -> SubmissionView:
        """Delete an artifact's bytes; every run that examined it still states what it was."""
        history = self._history(submission)
        self._may_act(history, by)
        sub = history.submission
        artifact = next((a for a in sub.artifacts if a.role == role), None)
        if artifact is None:
            raise InvalidInput(f"{submission} has no artifact {role!r}", where="ROLE")
        if role in self._withdrawn(submission):
            raise InvalidInput(
                f"artifact {role!r} of {submission} is already withdrawn", where="ROLE"
            )
        body = r.WithdrawnRecord(submission=submission, artifact=artifact, by=by)

        def delete_unneeded(find: Reader) -> None:
            """Delete the bytes under the write lock, keeping what any record names (this
            withdrawal not yet among them), so a submission storing the same bytes meanwhile
            either lands first (and keeps them) or finds them gone and stores them again."""
            keep = self._live_blobs(find, also_withdrawn=(submission, role))
            self.ledger.blobs.delete(artifact.sha256, tree=artifact.tree, keep=keep)

        self.ledger.append(
            self._entry(r.WITHDRAWN, submission, body, self.clock(), sub.problem, sub.participant),
            guard=delete_unneeded,
        )
        return self.show(submission, by)

    def nominate(self, submission: str, by: str) -> SubmissionView:
        """Name this submission the participant's final one for its problem."""
        history = self._history(submission)
        sub = history.submission
        if by != sub.participant:
            raise InvalidInput("only the participant who submitted it nominates it", where="--as")
        entry = self._revisions(sub.problem)[-1]
        independent = Revision.model_validate(entry.body).policy.independent_entry
        at = self.clock()
        if independent is not None and at >= independent.cutoff:
            raise InvalidInput(
                f"nominations closed at the cutoff ({independent.cutoff.isoformat()})",
                where="SUBMISSION",
            )
        body = r.NominatedRecord(submission=submission, problem=sub.problem, participant=by)
        self.ledger.append(self._entry(r.NOMINATED, submission, body, at, sub.problem, by))
        return self.show(submission, by)

    # ---------------------------------------------------------------- reading

    def show(self, submission: str, viewer: str) -> SubmissionView:
        """The submission, its runs and its current verdict, as ``viewer`` may see them."""
        person(viewer)
        history = self._history(submission)
        if self.reviews.due(history):  # a review's deadline passed: record it before showing
            self.reviews.advance(submission)
            history = self._history(submission)
        context = self._view_context(history, viewer)
        nominated = self._nominated(history.submission)
        return submission_view(history, context, nominated == submission)

    def allowance(self, problem: str, participant: str) -> dict[str, Any]:
        """The participant's allowance on the problem's current revision, as the submit form
        shows it: ``{"count", "window_hours", "left", "next_slot"}`` (None values: no
        allowance; ``next_slot``: when the next slot frees, when none is left now)."""
        person(participant)
        revision = self._revision(self._revisions(problem)[-1].subject)
        allowance = revision.policy.allowance
        if allowance is None:
            return {"count": None, "window_hours": None, "left": None, "next_slot": None}
        at = self.clock()
        seen = self.ledger.find(
            kind=_COUNTED,
            problem=problem,
            participant=participant,
            since=window_start(allowance, at),
        )
        left = sum(next_slot(allowance, seen, at, k) is None for k in range(allowance.count))
        slot = next_slot(allowance, seen, at)
        return {
            "count": allowance.count,
            "window_hours": allowance.window_hours,
            "left": left,
            "next_slot": slot.isoformat().replace("+00:00", "Z") if slot else None,
        }

    def verify(self) -> ChainReport:
        """The ledger's chain and blobs (``Ledger.verify``), and every blob a record still names
        present: a deleted reference, artifact or evidence is named, as an edited one is."""
        report = self.ledger.verify(blobs=True)
        if not report.intact:
            return report
        missing = sorted(sha for sha in self._live_blobs() if not self._present(sha))
        if not missing:
            return report
        return report.model_copy(
            update={
                "intact": False,
                "problem": f"blob {missing[0]} is missing or damaged, though a record still names it "
                f"({len(missing)} missing in all)",
            }
        )

    def _present(self, sha: str) -> bool:
        try:
            self.ledger.blobs.read(sha)
        except LedgerError:
            return False
        return True

    def sweep(self) -> list[str]:
        """Record as ``error`` ("interrupted") every run whose evaluating process is gone.

        The runs are re-read inside the append's transaction, so two processes sweeping at once
        (or a run finishing meanwhile) never give one run two ends."""
        states = (r.RUN_STARTED, r.RESUMED, r.AWAITING, r.FINISHED)
        for _ in range(3):
            latest: dict[str, Entry] = {}
            for subject in self.ledger.open_subjects(states[:2], states[2:]):
                for entry in self.ledger.find(kind=states, subject=subject):
                    latest[entry.body["run"]] = entry
            stale = {
                run: entry
                for run, entry in latest.items()
                if entry.kind in (r.RUN_STARTED, r.RESUMED)
                and gone(r.Owner.model_validate(entry.body["owner"]))
            }
            if not stale:
                return []

            def unchanged(find: Reader, stale: dict[str, Entry] = stale) -> None:
                for run, entry in stale.items():
                    now = [
                        e for e in find(kind=states, subject=entry.subject) if e.body["run"] == run
                    ]
                    if not now or now[-1].seq != entry.seq:
                        raise _Raced

            entries = [self._interrupted(run, entry) for run, entry in stale.items()]
            try:
                self.ledger.append(*entries, guard=unchanged)
            except _Raced:
                continue
            return list(stale)
        return []

    def _interrupted(self, run: str, entry: Entry) -> NewEntry:
        owner = r.Owner.model_validate(entry.body["owner"])
        finished = r.FinishedRecord(
            run=run,
            submission=entry.subject,
            status=Status.ERROR,
            detail=f"interrupted: the process evaluating this run (pid {owner.pid}) stopped "
            "before it finished; re-check the submission",
            interrupted=True,
        )
        return self._entry(
            r.FINISHED, entry.subject, finished, self.clock(), entry.problem, entry.participant
        )

    # ---------------------------------------------------------------- helpers

    def _entry(
        self,
        kind: str,
        subject: str,
        body: Any,
        at: datetime,
        problem: str | None = None,
        participant: str | None = None,
    ) -> NewEntry:
        return NewEntry(
            kind=kind,
            subject=subject,
            body=body.to_json(),
            problem=problem,
            participant=participant,
            at=at,
        )

    def _revisions(self, problem: str) -> list[Entry]:
        found = self.ledger.find(kind=r.REVISION, problem=problem)
        if not found:
            raise InvalidInput(f"no problem {problem!r} is published here", where="PROBLEM")
        return found

    def _managers(self, problem: str) -> list[str]:
        """The problem's managers (fixed when it is first published, so cached once known)."""
        if problem not in self._manager_cache:
            found = self.ledger.find(kind=r.PROBLEM, subject=problem)
            if not found:
                return []
            self._manager_cache[problem] = list(found[0].body["managers"])
        return self._manager_cache[problem]

    def _may_name_verifier(self, name: str, by: str) -> None:
        """A contract naming a verifier family whose versions all belong to problems ``by``
        does not manage is refused: a version is added by being published, so otherwise anyone
        could add versions (and checkers that "conformed") to another team's family. A new
        family is anyone's to start."""
        ids = {
            e.subject for e in self.ledger.find(kind=r.CONTRACT) if e.body.get("verifier") == name
        }
        owners = {e.problem for e in self.ledger.find(kind=r.CONTRACT) if e.subject in ids}
        owners |= {
            e.problem for e in self.ledger.find(kind=r.REVISION) if e.body.get("contract") in ids
        }
        owners.discard(None)
        if owners and not any(by in self._managers(str(o)) for o in owners):
            raise InvalidInput(
                f"{by!r} may not add a version to verifier {name!r}: its versions belong to "
                f"problems {by!r} does not manage ({', '.join(sorted(str(o) for o in owners))})",
                where="--as",
            )

    def _manages_any(self, by: str) -> bool:
        return any(by in e.body["managers"] for e in self.ledger.find(kind=r.PROBLEM))

    def _document(self, kind: str, subject: str) -> dict[str, Any]:
        key = (kind, subject)
        if key not in self._documents:
            found = self.ledger.find(kind=kind, subject=subject)
            if not found:
                raise InvalidInput(f"no {kind.split('.')[0]} {subject!r} here", where=kind)
            self._documents[key] = found[0].body
        return self._documents[key]

    def _revision(self, rid: str, body: dict[str, Any] | None = None) -> Revision:
        """A revision by id, parsed once (revisions are immutable)."""
        found = self._parsed.get(rid)
        if not isinstance(found, Revision):
            found = Revision.model_validate(body or self._document(r.REVISION, rid))
            self._parsed[rid] = found
        return found

    def _contract(self, cid: str) -> Contract:
        """A contract by id, parsed once (contracts are immutable)."""
        found = self._parsed.get(cid)
        if not isinstance(found, Contract):
            found = Contract.model_validate(self._document(r.CONTRACT, cid))
            self._parsed[cid] = found
        return found

    def _conformed(self, rid: str) -> set[str]:
        """Program checkers that conformed for the revision (recorded with it, so cached)."""
        if rid not in self._conformed_cache:
            self._conformed_cache[rid] = {
                e.body["conformance_key"]
                for e in self.ledger.find(kind=r.CONFORMANCE, subject=rid)
                if e.body["passed"] and e.body.get("conformance_key")
            }
        return self._conformed_cache[rid]

    def _history(self, submission: str) -> History:
        entries = self.ledger.find(subject=submission)
        if not any(e.kind == r.SUBMISSION for e in entries):
            raise InvalidInput(f"no submission {submission!r} here", where="SUBMISSION")
        return History(entries, self.ledger.find(kind=r.REVOKED))

    def _withdrawn(self, submission: str) -> set[str]:
        return {
            e.body["artifact"]["role"]
            for e in self.ledger.find(kind=r.WITHDRAWN, subject=submission)
        }

    def _live_blobs(
        self, find: Reader | None = None, also_withdrawn: tuple[str, str] | None = None
    ) -> set[str]:
        """Every sha256 a revision, a recorded piece of evidence, a campaign's file item or a
        non-withdrawn artifact still names (read with ``find``: inside a write, the write's own
        view)."""
        find = find or self.ledger.find
        live: set[str] = set()
        withdrawn = {(e.subject, e.body["artifact"]["role"]) for e in find(kind=r.WITHDRAWN)}
        if also_withdrawn is not None:
            withdrawn.add(also_withdrawn)
        for entry in find(kind=r.SUBMISSION):
            for artifact in entry.body["artifacts"]:
                if (entry.subject, artifact["role"]) not in withdrawn:
                    live.add(artifact["sha256"])
                    if artifact["tree"]:
                        live.update(self._tree_files(artifact["sha256"]))
        live.update(
            e.body["evidence_sha256"]
            for e in find(kind=r.EXTERNAL)
            if e.body.get("evidence_sha256")
        )
        for entry in find(kind=r.REVISION):
            revision = Revision.model_validate(entry.body)
            bindings = [
                revision.statement,
                *revision.skills.values(),
                *revision.references.values(),
                *revision.fixtures.values(),
            ]
            for binding in bindings:
                live.add(binding.sha256)
                if binding.tree:
                    live.update(self._tree_files(binding.sha256))
        from assay.platform._campaigns import CAMPAIGN

        for entry in find(kind=CAMPAIGN):  # a campaign's file items: a manager's own copies
            for item in entry.body["items"]:
                if item.get("run") is None:
                    live.update(material["sha256"] for material in item.get("materials", ()))
        return live

    def _tree_files(self, sha: str) -> list[str]:
        """The blobs a stored folder's manifest names; none when the manifest itself is gone or
        damaged (the manifest is then what ``verify`` reports)."""
        try:
            return [f[1] for f in self.ledger.blobs.manifest(sha)]
        except LedgerError:
            return []

    def _attempt(self, problem: str, participant: str, attempt: str | None) -> str:
        if attempt == "new":
            return new_id("a")
        if attempt is None:
            last = self.ledger.find(
                kind=r.SUBMISSION, problem=problem, participant=participant, newest=1
            )
            return str(last[0].body["attempt"]) if last else new_id("a")
        mine = self.ledger.find(kind=r.SUBMISSION, problem=problem, participant=participant)
        if not any(e.body["attempt"] == attempt for e in mine):
            raise InvalidInput(
                f"{attempt!r} is not one of your attempts on {problem!r} (use 'new' to start one)",
                where="--attempt",
            )
        return attempt

    def _may_act(self, history: History, by: str) -> None:
        person(by)
        sub = history.submission
        if by != sub.participant and by not in self._managers(sub.problem):
            raise InvalidInput(
                f"{by!r} is neither the participant nor a manager of {sub.problem!r}", where="--as"
            )

    def _nominated(self, sub: r.SubmissionRecord) -> str | None:
        found = self.ledger.find(kind=r.NOMINATED, problem=sub.problem, participant=sub.participant)
        return found[-1].subject if found else None

    def _view_context(self, history: History, viewer: str) -> ViewContext:
        sub = history.submission
        revision = self._revision(sub.revision)
        manager = viewer in self._managers(sub.problem)
        at = self.clock()
        independent = revision.policy.independent_entry
        if (
            not manager
            and viewer != sub.participant
            and independent is not None
            and at < independent.cutoff
        ):
            raise InvalidInput(
                "submissions are private to their participant until the cutoff "
                f"({independent.cutoff.isoformat()})",
                where="SUBMISSION",
            )
        return ViewContext(revision=revision, manager=manager, now=at)


def _trusted(
    kind: str,
    subject: str,
    body: Any,
    at: datetime,
    problem: str | None,
    participant: str | None,
) -> NewEntry:
    """``Platform._entry`` for the submission path, whose values are all the platform's own or
    already checked (ids it drew, a problem it found published, a participant ``person``
    accepted), so the entry skips pydantic's validation. ``body``: a record, or a record's
    JSON form already (``_records.started_body``)."""
    data = body if isinstance(body, dict) else r.body(body)
    return NewEntry.trusted(kind, subject, data, problem, participant, at)


_COUNTED = (r.SUBMISSION, r.REFUSED, r.FINISHED)
"""What an allowance reads: submissions, refusals, and how first runs ended."""

_Pending = tuple[r.SubmissionRecord, str, Revision, "Contract | None", int, list[Entry]]
"""A run to carry on: its submission, id, revision, contract, first stage, entries so far."""


@dataclass(frozen=True)
class Work:
    """One piece of work to submit (``Platform.submit_many``)."""

    participant: str
    artifacts: Mapping[str, Path] = field(default_factory=dict)
    summary: str | None = None
    attempt: str | None = None


def external_checker(stage: ExternalStage, contract: str) -> str:
    """What concludes an external stage, as runs name it and a revocation may: the party by
    name, a rule by its contract and stage."""
    if stage.mechanism == "party":
        return f"party:{stage.party}"
    return f"rule:{contract}/{stage.name}"


def _may_record(stage: ExternalStage, by: str, participant: str) -> None:
    """Only the named party records a party stage, and only a named supplier supplies a rule's
    evidence; never for the submission's own participant (its word about its own work is
    never a conclusion)."""
    if stage.mechanism == "party":
        if by != stage.party or by == participant:
            raise InvalidInput(
                f"only {stage.party!r} records stage {stage.name!r}, and never for its own "
                "submission",
                where="--as",
            )
        return
    allowed = stage.supplied_by or []
    if by not in allowed or by == participant:
        raise InvalidInput(
            f"{by!r} may not supply evidence for stage {stage.name!r} (supplied by: "
            f"{', '.join(allowed)}; never the submission's own participant: a participant's "
            "account of its own work is never evidence)",
            where="--as",
        )


class _Raced(Exception):
    """Another process changed a run between the sweep's read and its write (caught in sweep)."""


@contextlib.contextmanager
def _paused_cycle_collector() -> Iterator[None]:
    """Pause Python's cycle collector for one batch. A batch makes tens of thousands of
    short-lived, acyclic objects (records, views), which reference counting frees at once; the
    collector would otherwise walk them over and over (measured: a third of a batch's time on a
    grown store). Cycles made meanwhile are collected when it resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _refusals(
    contract: Contract | None, artifacts: Mapping[str, Path], summary: str | None
) -> list[str]:
    """Why a submission is refused at the door, one reason per role."""
    problems = []
    if summary is not None and len(summary.encode("utf-8", "surrogatepass")) > MAX_SUMMARY:
        problems.append(f"the summary is larger than {MAX_SUMMARY} bytes")
    for given in artifacts:
        if not NAME.fullmatch(given):
            problems.append(f"{given!r} is not a role name")
        elif contract is not None and contract.role(given) is None:
            declared = ", ".join(x.name for x in contract.roles) or "none"
            problems.append(f"unknown role {given!r} (this problem's roles: {declared})")
    if contract is None:
        return problems
    for role in contract.roles:
        path = artifacts.get(role.name)
        if path is None:
            if role.required:
                problems.append(f"role {role.name!r} is required and was not given")
            continue
        size = _size(path)
        if isinstance(size, str):
            problems.append(f"role {role.name!r}: {size}")
        elif size > role.max_bytes:
            problems.append(
                f"role {role.name!r}: {size} bytes is larger than its {role.max_bytes} byte limit"
            )
    if not artifacts and summary is None:
        problems.append("nothing was submitted (give --artifact ROLE=PATH or --summary)")
    return problems


def _size(path: Path) -> int | str:
    """Bytes in a file or a folder (regular files and folders only, within the depth, entry
    and path-length caps the sandbox stages trees under), or why it is refused."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"{str(path)!r} cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return os.lstat(path).st_size
    if not stat.S_ISDIR(mode):
        return f"{str(path)!r} is not a regular file or a folder"
    total = entries = 0
    problems: list[str] = []
    for root, dirs, files in os.walk(path, onerror=lambda exc: problems.append(str(exc.strerror))):
        relative = os.path.relpath(root, path)
        if relative.count(os.sep) + 1 > MAX_DEPTH or len(relative) > MAX_RELATIVE_PATH:
            return (
                f"the folder nests deeper than {MAX_DEPTH} levels or {MAX_RELATIVE_PATH} characters"
            )
        for name in dirs + files:
            entries += 1
            if entries > MAX_ENTRIES:
                return f"the folder holds more than {MAX_ENTRIES} entries"
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError as exc:
                return f"an entry of the folder cannot be read ({exc.strerror})"
            if stat.S_ISLNK(info.st_mode):
                return f"{os.path.join(root, name)!r} is a symbolic link (give files and folders)"
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
            elif not stat.S_ISDIR(info.st_mode):
                return f"{os.path.join(root, name)!r} is not a regular file or a folder"
    if problems:
        return f"the folder cannot be read whole ({problems[0]})"
    return total
