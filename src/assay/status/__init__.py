"""Statuses, outcomes and reports: the vocabulary every layer above speaks.

``clean_text`` is here too because whoever prints what a candidate wrote (the CLI's tables)
must clean it exactly as the reports do.
"""

from assay.status._clean import clean_text
from assay.status._report import Mode, Report, combine
from assay.status._status import Outcome, Status

__all__ = ["Mode", "Outcome", "Report", "Status", "clean_text", "combine"]
