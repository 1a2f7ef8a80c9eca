"""A hedge must never read as one number (issue 7, item 8).

Every digit of any script and every number-like token counts toward "exactly one number"; what
cannot be read exactly is refused with its reason, never skipped. ``sql_query`` with
``compare: answer_value`` reads answers with the same parser, so it is tried on the same hedges.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay import Status
from tests.helpers import run_kind

# (answer, the value a lenient reader would wrongly accept)
HEDGES = [
    # a letter glued to the next number made it a "unit"
    ("either 11 or711", 11),
    ("42 maybe43", 42),
    ("42 %43", 42),
    ("42 or43", 42),
    ("11 or7", 11),
    ("42 cm3", 42),
    ("42 or^43", 42),
    ("5 m**1e9", 5),
    # digits of other scripts
    ("42 or ４３", 42),
    ("42 or ٤٣", 42),
    ("42 or ४३", 42),
    ("42 or 𝟒𝟑", 42),
    ("42 ⑧", 42),
    ("42 or Ⅻ", 42),
    ("42 or 四十三", 42),
    # superscripts and vulgar fractions after a number
    ("42²", 42),
    ("10⁵", 10),
    ("42½", 42),
    ("42 ¾", 42),
    ("42₃", 42),
    # magnitude words and suffixes
    ("42 million", 42),
    ("42 Million", 42),
    ("42-thousand", 42),
    ("42 bn", 42),
    ("42k", 42),
    ("42K", 42),
    ("42 M", 42),
    # non-finite words beside a number
    ("42 NaN", 42),
    ("42 Infinity", 42),
    ("42 or inf", 42),
    ("42 ∞", 42),
    # spelled numbers beside a number
    ("42 or forty-three", 42),
    ("42, maybe fifty", 42),
    # signs and comparisons that do not read as one value
    ("±42", 42),
    ("+-42", 42),
    ("-+42", 42),
    ("⁻42", 42),
    ("> 42", 42),
    ("≥42", 42),
    ("≠ 42", 42),
    ("42+", 42),
    ("- 42", 42),
    # letters and invisible characters that only look different
    ("42 ｍｉｌｌｉｏｎ", 42),
    ("42\u200bk", 42),
    ("42 ＮａＮ", 42),
    ("42\u00ad43", 42),
    ("42\u200b43", 42),
    ("x = − 42", 42),
]


@pytest.mark.parametrize(("answer", "value"), HEDGES)
def test_a_hedge_is_refuted(answer: str, value: int) -> None:
    outcome = run_kind("answer_number", answer=answer, value=value)
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)
    assert outcome.evidence is not None
    assert outcome.evidence["reason"] in {"ambiguous", "unreadable"}, outcome.detail


@pytest.mark.parametrize(
    ("answer", "value"),
    [("－42", 42), ("‐42", 42), ("﹣42", 42), ("—42", 42), ("‒42", 42), ("➖42", 42)],
)
def test_every_minus_sign_is_read(answer: str, value: int) -> None:
    assert run_kind("answer_number", answer=answer, value=value).status is Status.REFUTED
    assert run_kind("answer_number", answer=answer, value=-value).status is Status.VERIFIED


@pytest.mark.parametrize(
    ("answer", "spec"),
    [
        ("36 km/h", {"value": 10, "unit": "m/s"}),
        ("3 m^2", {"value": 3}),
        ("3 m²", {"value": 3, "unit": "m^2"}),
        ("9.81 m/s^2", {"value": 9.81}),
        ("1,000", {"value": 1000}),
        ("1e-3", {"value": 0.001}),
        ("-5", {"value": -5}),
        ("−5", {"value": -5}),
        ("$42", {"value": 42}),
        ("42%", {"value": 42, "unit": "%"}),
        ("300 K", {"value": 300, "unit": "K"}),
        ("300K", {"value": 300, "unit": "K"}),
        ("٤٢", {"value": 42}),
        ("４２", {"value": 42}),
        ("４２．５", {"value": 42.5}),
        ("3 ｋｍ", {"value": 3000, "unit": "m"}),
        ("x => 42", {"value": 42}),
        ("≈ 42", {"value": 42}),
    ],
)
def test_legitimate_forms_still_pass(answer: str, spec: dict[str, Any]) -> None:
    outcome = run_kind("answer_number", answer=answer, **spec)
    assert outcome.status is Status.VERIFIED, (answer, outcome.detail)


def test_unreadable_alone_says_why() -> None:
    outcome = run_kind("answer_number", answer="42 million", value=42)
    assert "magnitude" in outcome.detail
    outcome = run_kind("answer_number", answer="½", value=0.5)
    assert outcome.status is Status.REFUTED
    assert "cannot be read" in outcome.detail


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (n INTEGER)")
        connection.execute("INSERT INTO t VALUES (11), (42)")
    return path


@pytest.mark.parametrize(
    "answer", ["either 11 or711", "11 maybe12", "11 or ١٢", "11²", "11 million", "11k", "11 NaN"]
)
def test_sql_answer_value_inherits_the_rule(db: Path, answer: str) -> None:
    outcome = run_kind(
        "sql_query",
        answer=answer,
        database=db.name,
        base_dir=db.parent,
        query="SELECT min(n) FROM t",
        compare="answer_value",
    )
    assert outcome.status is Status.REFUTED, (answer, outcome.detail)
