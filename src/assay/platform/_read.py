"""Reading a submission's history back into views, applying the release rules.

The ledger keeps every word a check said. What a viewer sees is decided here, at reading time:
details of checks that read a still-sealed reference are withheld from participants, held
results stay held until the score release, and a revoked run is shown, marked, and not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assay.ledger import Entry
from assay.platform import _records as r
from assay.platform._revision import Revision
from assay.platform._views import ArtifactView, RunView, StageView, SubmissionView, Verdict
from assay.status import Status


def when(moment: datetime) -> str:
    """A moment as people read it in a line (ISO 8601, Z for UTC)."""
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class ViewContext:
    """Who is looking, at what revision, and when."""

    revision: Revision
    manager: bool
    now: datetime

    @property
    def held_until(self) -> datetime | None:
        """The score release a participant still waits for (None: results are visible)."""
        release = self.revision.policy.release
        if self.manager or release.results != "held" or release.score_release is None:
            return None
        return release.score_release if self.now < release.score_release else None

    def sealed_until(self, keys: list[str]) -> datetime | None:
        """The latest unseal date among ``keys`` still sealed for this viewer (None: none)."""
        if self.manager:
            return None
        dates = [d for k in keys if (d := self.revision.unseals_at(k)) is not None and self.now < d]
        return max(dates) if dates else None


class History:
    """Every entry about one submission, grouped into its runs, with the ledger's revocations."""

    def __init__(
        self,
        entries: list[Entry],
        revocations: list[Entry],
        submission: r.SubmissionRecord | None = None,
    ) -> None:
        """``submission``: the record its first entry holds, when the caller has it already
        (it just wrote it), so it is not parsed again."""
        self.entries = entries
        first = next(e for e in entries if e.kind == r.SUBMISSION)
        self.submission = submission or r.SubmissionRecord.model_validate(first.body)
        self.submitted = first.at
        self.runs: dict[str, list[Entry]] = {}
        for entry in entries:
            run = entry.body.get("run")
            if isinstance(run, str):
                self.runs.setdefault(run, []).append(entry)
        self.revocations = revocations
        self.withdrawn = {e.body["artifact"]["role"] for e in entries if e.kind == r.WITHDRAWN}

    def state(self, run: str) -> Entry:
        """The run's latest state entry (started, resumed, awaiting or finished)."""
        states = (r.RUN_STARTED, r.RESUMED, r.AWAITING, r.FINISHED)
        return [e for e in self.runs[run] if e.kind in states][-1]

    def waiting_at(self, stage: str) -> str | None:
        """The latest run that waits at ``stage``, if any."""
        for run in reversed(list(self.runs)):
            state = self.state(run)
            if state.kind == r.AWAITING and state.body["stage"] == stage:
                return run
        return None

    def awaiting_since(self, run: str) -> datetime | None:
        """When the run began waiting."""
        state = self.state(run)
        return state.at if state.kind == r.AWAITING else None

    def revoked(self, run: str) -> str | None:
        """Why the run no longer counts: a checker it used was revoked after it started."""
        started = self.runs[run][0].seq
        used = {c for e in self.runs[run] if e.kind == r.STAGE for c in e.body.get("checkers", [])}
        for revocation in self.revocations:
            if (
                revocation.subject in used
                and revocation.seq > started
                and r.revokes(revocation.body, self.submission.problem)
            ):
                return f"checker {revocation.subject} revoked: {revocation.body['why']}"
        return None

    def finished(self, run: str) -> Status | None:
        """The run's final status (None while it is in flight or waits)."""
        state = self.state(run)
        return Status(state.body["status"]) if state.kind == r.FINISHED else None


def _check_view(check: dict[str, Any], context: ViewContext) -> dict[str, Any]:
    sealed = context.sealed_until(check.get("reads_sealed", []))
    shown = {k: check.get(k) for k in ("kind", "status", "checker", "detail", "evidence")}
    if sealed is not None:
        shown["detail"] = (
            f"withheld until {when(sealed)}: this check reads a sealed reference "
            f"({', '.join(check['reads_sealed'])})"
        )
        shown["evidence"] = None
    return shown


def stage_view(entry: Entry, context: ViewContext) -> StageView:
    """One concluded stage as the viewer may see it."""
    body = entry.body
    checks = [_check_view(c, context) for c in body.get("checks", [])]
    detail = body["detail"]
    withheld = [
        c for c in body.get("checks", []) if context.sealed_until(c.get("reads_sealed", []))
    ]
    if withheld:
        passed = sum(c["status"] == Status.VERIFIED for c in body["checks"])
        until = context.sealed_until([k for c in withheld for k in c["reads_sealed"]])
        assert until is not None
        detail = (
            f"{passed} of {len(body['checks'])} checks passed; the details of checks that read "
            f"sealed references are withheld until {when(until)}"
        )
    return r.built(  # a row read back from the chain, which only assay's records wrote
        StageView,
        name=body["name"],
        type=body["type"],
        status=Status(body["status"]),
        detail=detail,
        mechanism=body.get("mechanism"),
        checkers=body.get("checkers", []),
        isolation=body.get("isolation"),
        checks=checks,
        inputs=body.get("inputs", {}),
        started=_moment(body.get("started")),
        finished=_moment(body.get("finished")),
        recorded_by=body.get("recorded_by"),
    )


def _moment(text: str | None) -> datetime | None:
    """A stored record's time (``StageRecord``'s JSON form: ISO 8601) back as a datetime."""
    return None if text is None else datetime.fromisoformat(text)


def run_view(history: History, run: str, context: ViewContext) -> RunView:
    """One run as the viewer may see it."""
    entries = history.runs[run]
    started = entries[0]
    state = history.state(run)
    recheck = bool(started.body.get("recheck", False))
    held = context.held_until
    if held is not None:
        return RunView(
            submission=history.submission.submission,
            run=run,
            status=None,
            label=f"Recorded; results on {when(held)}",
            detail=f"results are released on {when(held)}",
            stages=[],
            started=started.at,
            recheck=recheck,
        )
    stages = [stage_view(e, context) for e in entries if e.kind == r.STAGE]
    revoked = history.revoked(run)
    if state.kind == r.AWAITING:
        awaits = state.body["awaits"]
        stages.append(
            StageView(
                name=state.body["stage"],
                type=state.body.get("type", "external"),
                status=None,
                detail=f"pending: awaiting {awaits}",
            )
        )
        return RunView(
            submission=history.submission.submission,
            run=run,
            status=None,
            label=f"Pending: awaiting {awaits}",
            detail=f"stage {state.body['stage']!r} awaits {awaits}",
            stages=stages,
            revoked=revoked,
            started=started.at,
            recheck=recheck,
        )
    if state.kind != r.FINISHED:
        return RunView(
            submission=history.submission.submission,
            run=run,
            status=None,
            label="Running",
            detail="the run is being evaluated",
            stages=stages,
            revoked=revoked,
            started=started.at,
            recheck=recheck,
        )
    status = Status(state.body["status"])
    failing = next((s for s in stages if s.status is not Status.VERIFIED), None)
    detail = f"stage {failing.name!r}: {failing.detail}" if failing else state.body["detail"]
    if failing is None and status is not Status.VERIFIED:
        detail = state.body["detail"]
    return r.built(
        RunView,
        submission=history.submission.submission,
        run=run,
        status=status,
        label=status.label,
        detail=detail,
        stages=stages,
        revoked=revoked,
        started=started.at,
        finished=state.at,
        recheck=recheck,
    )


def verdict(history: History, context: ViewContext) -> Verdict:
    """The standing verdict (the latest finding of a counted run) and the latest re-check.

    Runs of one submission are judged under one revision, so they must agree: when counted
    runs found both verified and refuted, the standing verdict is inconclusive (a submission
    re-checked until a flaky run passes is not verified)."""
    held = context.held_until
    if held is not None:
        return Verdict(standing=None, latest=None, text=f"Recorded; results on {when(held)}")
    counted = [
        (run, status)
        for run in history.runs
        if history.revoked(run) is None and (status := history.finished(run)) is not None
    ]
    if not counted:
        waiting = [run for run in history.runs if history.state(run).kind == r.AWAITING]
        if waiting:
            return Verdict(
                standing=None,
                latest=None,
                text=f"Pending: awaiting {history.state(waiting[-1]).body['awaits']}",
            )
        revoked = [why for run in history.runs if (why := history.revoked(run))]
        if revoked:
            text = f"No verdict: every concluded run was revoked ({revoked[-1]})"
        else:
            text = "Not concluded yet" if history.runs else "Not evaluated"
        return Verdict(standing=None, latest=None, text=text)
    findings = [(run, s) for run, s in counted if s in (Status.VERIFIED, Status.REFUTED)]
    if len({s for _, s in findings}) > 1:  # one revision, one contract: the runs disagree
        refuted = next(run for run, s in findings if s is Status.REFUTED)
        verified = next(run for run, s in findings if s is Status.VERIFIED)
        return Verdict(
            standing=Status.INCONCLUSIVE,
            latest=counted[-1][1],
            text=f"Could not determine: the runs conflict (refuted in {refuted}, verified in "
            f"{verified}); the checks or the work are not deterministic",
        )
    standing_run, standing = findings[-1] if findings else counted[-1]
    latest_run, latest = counted[-1]
    if latest_run == standing_run:
        return Verdict(standing=standing, latest=None, text=standing.label)
    return Verdict(
        standing=standing,
        latest=latest,
        text=f"{standing.label}; latest re-check: {latest.label.lower()}",
    )


def submission_view(history: History, context: ViewContext, nominated: bool) -> SubmissionView:
    """The submission with its runs and current verdict, as the viewer may see it."""
    sub = history.submission
    return SubmissionView(
        submission=sub.submission,
        problem=sub.problem,
        revision=sub.revision,
        participant=sub.participant,
        attempt=sub.attempt,
        submitted=history.submitted,
        artifacts=[
            ArtifactView(
                role=a.role, size=a.size, sha256=a.sha256, withdrawn=a.role in history.withdrawn
            )
            for a in sub.artifacts
        ],
        summary=sub.summary,
        nominated=nominated,
        verdict=verdict(history, context),
        runs=[run_view(history, run, context) for run in history.runs],
    )
