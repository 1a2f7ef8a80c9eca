"""Review protocols: graphs of review nodes (seats claimed by accountable reviewers) and
deterministic reduce nodes, validated in full before any seat opens; seats, responses and every
reduction step are ledger entries. The platform runs a contract's review stage with this.
"""

from assay.review import _records as records
from assay.review._board import STATUS_OF, Board, NodeState, Seat, parse_seat, seat_id
from assay.review._protocol import (
    Protocol,
    ReduceNode,
    ReviewNode,
    fold,
    graph_problems,
    parse_protocol,
    protocol_problems,
)
from assay.review._records import Material
from assay.review._reduce import (
    aggregate_of,
    exact_score,
    first_resolved,
    m_of_n,
    reduce,
    score,
)
from assay.review._report import Answer, ReviewReport, Unit, report
from assay.review._response import check_response, written_numbers
from assay.review._yaml import load_yaml

__all__ = [
    "Answer",
    "STATUS_OF",
    "Board",
    "Material",
    "NodeState",
    "Protocol",
    "ReduceNode",
    "ReviewNode",
    "ReviewReport",
    "Seat",
    "Unit",
    "check_response",
    "aggregate_of",
    "exact_score",
    "first_resolved",
    "fold",
    "graph_problems",
    "load_yaml",
    "m_of_n",
    "parse_protocol",
    "parse_seat",
    "protocol_problems",
    "records",
    "reduce",
    "report",
    "score",
    "seat_id",
    "written_numbers",
]
