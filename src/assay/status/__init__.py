"""Statuses, outcomes and reports: the vocabulary every layer above speaks."""

from assay.status._report import Mode, Report, combine
from assay.status._status import Outcome, Status

__all__ = ["Mode", "Outcome", "Report", "Status", "combine"]
