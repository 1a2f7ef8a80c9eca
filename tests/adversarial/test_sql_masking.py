"""A wrong SQL answer that never ends is refuted when the author made the limit a rule.

With ``limits_are_rules: true`` an answer query that runs past the time limit (a runaway
recursive CTE) is refuted; by default it stays inconclusive, and the verifier's own query running
out of time is always inconclusive (it says nothing about the work).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Outcome, Status
from tests.helpers import run_kind

RUNAWAYS = [
    # never yields a row, never ends
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x < 0",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x FROM c) SELECT max(x) FROM c",
    "SELECT count(*) FROM t a, t b, t c, t d, t e, t f, t g, t h",
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "v.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (n INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(60)])
    return path


def _run(db: Path, answer: str, **spec: Any) -> Outcome:
    return run_kind(
        "sql_query",
        answer=answer,
        database=db.name,
        base_dir=db.parent,
        query="SELECT count(*) FROM t",
        compare="answer_query",
        config=Config(sql_timeout=0.3),
        **spec,
    )


@pytest.mark.parametrize("answer", RUNAWAYS)
def test_a_runaway_answer_is_refuted_when_limits_are_rules(db: Path, answer: str) -> None:
    outcome = _run(db, answer, limits_are_rules=True)
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "did not finish" in outcome.detail


@pytest.mark.parametrize("answer", RUNAWAYS[:2])
def test_by_default_a_runaway_answer_is_inconclusive(db: Path, answer: str) -> None:
    assert _run(db, answer).status is Status.INCONCLUSIVE


def test_a_runaway_verifier_query_is_never_a_finding(db: Path) -> None:
    outcome = run_kind(
        "sql_query",
        answer="SELECT 1",
        database=db.name,
        base_dir=db.parent,
        query=RUNAWAYS[1],
        compare="answer_query",
        limits_are_rules=True,
        config=Config(sql_timeout=0.3),
    )
    assert outcome.status is Status.INCONCLUSIVE


def test_a_correct_answer_still_passes_with_limits_as_rules(db: Path) -> None:
    assert _run(db, "SELECT count(*) FROM t", limits_are_rules=True).status is Status.VERIFIED
