"""The submission allowance: a rolling window per participant per problem.

Invalid and withdrawn submissions count (trying costs a slot, and withdrawing must not give one
back); a submission whose first run ended in ``error`` does not (that was assay's fault), unless
the run was interrupted: a process that stopped mid-run cannot be told from a participant who
killed it to get a free judgment by re-checking later, so an interrupted run still counts.
The window is shared across revisions: a new revision does not reset anyone's count.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from assay._errors import InvalidInput
from assay.ledger import Entry
from assay.platform._records import FINISHED, REFUSED, SUBMISSION
from assay.platform._revision import Allowance
from assay.status import Status


class AllowanceUsed(InvalidInput):
    """The participant has used every submission of the window; ``next_slot`` says when one
    frees."""

    def __init__(self, allowance: Allowance, next_slot: datetime) -> None:
        self.next_slot = next_slot
        super().__init__(
            f"the allowance of {allowance.count} submissions per {allowance.window_hours:g} h "
            f"is used; the next slot frees at {next_slot.isoformat().replace('+00:00', 'Z')}",
            where="allowance",
        )


def window_start(allowance: Allowance, now: datetime) -> datetime:
    """The earliest time a counted submission can have."""
    return now - timedelta(hours=allowance.window_hours)


def next_slot(
    allowance: Allowance, entries: Sequence[Entry], now: datetime, pending: int = 0
) -> datetime | None:
    """When the next submission may be made: None when one may be made now.

    ``entries``: the participant's submission, refusal and run-finished entries for the problem
    since the window opened; ``pending``: submissions of the same batch before this one, which
    count as made ``now``."""
    start = window_start(allowance, now)
    first_finish: dict[str, bool] = {}
    for entry in entries:
        if entry.kind == FINISHED and entry.subject not in first_finish:
            first_finish[entry.subject] = entry.body[
                "status"
            ] == Status.ERROR and not entry.body.get("interrupted", False)
    counted = sorted(
        entry.at
        for entry in entries
        if entry.kind in (SUBMISSION, REFUSED)
        and entry.at > start
        and not first_finish.get(entry.subject, False)
    )
    counted += [now] * pending
    if len(counted) < allowance.count:
        return None
    return counted[len(counted) - allowance.count] + timedelta(hours=allowance.window_hours)
