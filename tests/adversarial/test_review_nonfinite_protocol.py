"""A protocol that validates but cannot be computed: YAML's ``.nan`` / ``.inf`` as a score
threshold (or ``reject_below``), and numbers given as booleans.

Found: ``protocol_problems`` accepts a non-finite ``threshold``/``reject_below``
(src/assay/review/_protocol.py, ``ReduceNode.threshold: float | None``: pydantic allows inf and
nan). The reducer then calls ``Fraction(repr(nan))`` (src/assay/review/_reduce.py, ``_exact``)
would raise ValueError: the last reviewer's response would crash instead of being recorded; the
stage could only end at its deadline. At publish the number is stored as null, so the stored
contract no longer validates and every submission's review concludes inconclusive: a problem
nobody can pass, published without a word.
Wanted: ``Field(allow_inf_nan=False)`` (or ``FiniteFloat``) on threshold and reject_below, named
in the problem line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.review import load_yaml, protocol_problems
from tests.platform.conftest import Clock
from tests.review.helpers import publish, review_node, sqlite_platform


def _score(threshold: str, reject_below: str | None = None) -> str:
    extra = f", reject_below: {reject_below}" if reject_below is not None else ""
    return f"""
nodes:
  panel:
    type: review
    seats: 1
    eligible: {{group: reviewers}}
    rubric: Score it.
    response_schema:
      type: object
      required: [score]
      properties: {{score: {{type: number, minimum: 0, maximum: 1}}}}
    assistance: {{required: false}}
  vote: {{type: reduce, op: score, inputs: [panel], field: score, threshold: {threshold}{extra},
          final: true}}
"""


@pytest.mark.parametrize(
    ("threshold", "reject_below", "key"),
    [
        (".nan", None, "threshold"),
        (".inf", None, "threshold"),
        ("-.inf", None, "threshold"),
        ("0.5", ".nan", "reject_below"),
        ("0.5", "-.inf", "reject_below"),
    ],
)
def test_a_non_finite_threshold_is_refused(
    threshold: str, reject_below: str | None, key: str
) -> None:
    raw = load_yaml(_score(threshold, reject_below).encode(), "p.yaml")
    problems = protocol_problems(raw, "p.yaml")
    assert any(key in line for line in problems), problems


def test_the_finite_protocol_is_valid() -> None:
    assert protocol_problems(load_yaml(_score("0.5", "0.25").encode(), "p.yaml"), "p") == []


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_publishing_a_non_finite_threshold_is_refused(tmp_path: Path, value: float) -> None:
    """Today the folder is accepted, the non-finite number is stored as null in the contract,
    and every submission's review stage then concludes inconclusive ("score needs 'field' and
    'threshold'"): a problem nobody can pass, published without a word."""
    node = review_node(1)
    node["response_schema"] = {
        "type": "object",
        "required": ["score"],
        "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
    }
    node["assistance"] = {"required": False}
    vote: dict[str, Any] = {
        "type": "reduce",
        "op": "score",
        "inputs": ["panel"],
        "field": "score",
        "threshold": value,
        "final": True,
    }
    with (
        sqlite_platform(tmp_path, Clock()) as platform,
        pytest.raises(InvalidInput, match="threshold"),
    ):
        publish(platform, tmp_path, {"nodes": {"panel": node, "vote": vote}})
