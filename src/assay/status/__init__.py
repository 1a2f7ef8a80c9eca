"""Statuses, outcomes and reports: the vocabulary every layer above speaks.

``clean_text`` and ``clean_value`` are here too because whoever prints or writes what a
candidate wrote (the CLI's tables, the service's hand-written result JSON) must clean it exactly
as the reports do.
"""

from assay.status._clean import clean_text, clean_value
from assay.status._report import Mode, Report, combine
from assay.status._status import Outcome, Status

__all__ = ["Mode", "Outcome", "Report", "Status", "clean_text", "clean_value", "combine"]
