from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay import Config, InvalidSpec, Status
from tests.helpers import run_kind

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL, items INTEGER);
            INSERT INTO orders VALUES (1, 'ann', 10.5, 1), (2, 'bob', 20.0, 2),
                                      (3, 'ann', 5.0, 1), (4, 'cid', 7.25, 3);
            """
        )
    conn.close()
    return path


def sql(db: Path, answer: str | None = None, config: Config | None = None, **spec: Any) -> Any:
    return run_kind(
        "sql_query", answer=answer, base_dir=db.parent, database=db.name, config=config, **spec
    )


def test_literal_rows_as_a_bag(db: Path) -> None:
    query = "SELECT customer FROM orders"
    assert sql(db, query=query, rows=[["bob"], ["ann"], ["cid"], ["ann"]]).status is V
    out = sql(db, query=query, rows=[["ann"], ["bob"], ["cid"]])
    assert out.status is R
    assert "expected 3 rows, got 4" in out.detail
    assert "not expected: ['ann']" in out.detail


def test_duplicates_count(db: Path) -> None:
    query = "SELECT customer FROM orders WHERE customer = 'ann'"
    assert sql(db, query=query, rows=[["ann"]]).status is R
    assert sql(db, query=query, rows=[["ann"], ["ann"], ["ann"]]).status is R
    assert sql(db, query=query, rows=[["ann"], ["ann"]]).status is V


def test_ordered(db: Path) -> None:
    query = "SELECT id FROM orders ORDER BY id"
    assert sql(db, query=query, rows=[[1], [2], [3], [4]], ordered=True).status is V
    assert sql(db, query=query, rows=[[2], [1], [3], [4]], ordered=True).status is R
    assert sql(db, query=query, rows=[[2], [1], [3], [4]]).status is V


def test_types_are_strict(db: Path) -> None:
    assert sql(db, query="SELECT total FROM orders WHERE id = 2", rows=[[20]]).status is R
    assert sql(db, query="SELECT total FROM orders WHERE id = 2", rows=[[20.0]]).status is V
    assert sql(db, query="SELECT id FROM orders WHERE id = 2", rows=[["2"]]).status is R


def test_failure_detail_shows_counts_and_first_three_rows(db: Path) -> None:
    out = sql(db, query="SELECT id FROM orders", rows=[[9], [8], [7], [6], [5]])
    assert "expected 5 rows, got 4" in out.detail
    assert "first expected: [9]; [8]; [7]; first actual: [1]; [2]; [3]" in out.detail


ANSWER_QUERY = "SELECT customer, SUM(total) FROM orders GROUP BY customer"


@pytest.mark.parametrize(
    ("answer", "status", "message"),
    [
        ("SELECT customer, SUM(total) FROM orders GROUP BY 1 ORDER BY 2 DESC", V, "3 rows match"),
        ("select customer, total from orders", R, "expected 3 rows, got 4"),
        ("SELECT 'ann', 15.5 UNION ALL SELECT 'bob', 20.0 UNION ALL SELECT 'cid', 7.25", V, ""),
        (
            "SELECT customer, SUM(total) FROM orders GROUP BY customer; DROP TABLE orders",
            R,
            "one statement",
        ),
        ("DELETE FROM orders", R, "may only read"),
        ("INSERT INTO orders VALUES (9, 'eve', 1, 1)", R, "may only read"),
        ("ATTACH DATABASE '/etc/passwd' AS x", R, "may only read"),
        ("PRAGMA table_info(orders)", R, "may only read"),
        ("SELECT * FROM nowhere", R, "no such table"),
        ("SELEC 1", R, "syntax error"),
        ("", R, "the answer is empty"),
        ("   ", R, "the answer is empty"),
    ],
)
def test_answer_query(db: Path, answer: str, status: Status, message: str) -> None:
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    out = sql(db, answer=answer, query=ANSWER_QUERY, compare="answer_query")
    assert out.status is status, out.detail
    assert message in out.detail
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_runaway_answer_query_is_inconclusive(db: Path) -> None:
    forever = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    )
    out = sql(
        db,
        answer=forever,
        query=ANSWER_QUERY,
        compare="answer_query",
        config=Config(sql_timeout=0.3),
    )
    assert out.status is I
    assert "did not finish within 0.3s" in out.detail


def test_a_huge_answer_result_is_refused(db: Path) -> None:
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i, i FROM n"
    out = sql(db, answer=many, query=ANSWER_QUERY, compare="answer_query", max_rows=100)
    assert out.status is R
    assert "more than 100 rows" in out.detail


@pytest.mark.parametrize(
    ("query", "answer", "status"),
    [
        ("SELECT SUM(items) FROM orders", "7", V),
        ("SELECT SUM(items) FROM orders", "There are 7 items.", V),
        ("SELECT SUM(items) FROM orders", "17", R),
        ("SELECT SUM(items) FROM orders", "7 or 8", R),
        ("SELECT SUM(total) FROM orders", "42.75", V),
        ("SELECT SUM(total) FROM orders", "42.7", R),
        ("SELECT customer FROM orders WHERE id = 2", "bob", V),
        ("SELECT customer FROM orders WHERE id = 2", "Bob", R),
        ("SELECT NULL", "NULL", V),
    ],
)
def test_answer_value(db: Path, query: str, answer: str, status: Status) -> None:
    assert sql(db, answer=answer, query=query, compare="answer_value").status is status


def test_answer_value_needs_one_cell(db: Path) -> None:
    out = sql(db, answer="1", query="SELECT id FROM orders", compare="answer_value")
    assert out.status is E
    assert "one row of one column" in out.detail


def test_broken_verifier_query_is_an_error_not_a_finding(db: Path) -> None:
    assert sql(db, query="SELECT * FROM missing_table", rows=[[1]]).status is E


def test_missing_database_is_inconclusive(tmp_path: Path) -> None:
    out = run_kind(
        "sql_query", base_dir=tmp_path, database="none.sqlite", query="SELECT 1", rows=[[1]]
    )
    assert out.status is I


def test_no_answer_is_inconclusive(db: Path) -> None:
    assert sql(db, answer=None, query=ANSWER_QUERY, compare="answer_query").status is I


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"database": "a", "query": "SELECT 1"}, "exactly one of 'rows'"),
        (
            {"database": "a", "query": "SELECT 1", "rows": [[1]], "compare": "answer_query"},
            "exactly one of",
        ),
        ({"database": "a", "query": "", "rows": [[1]]}, "query: must not be empty"),
        ({"database": "a", "query": "SELECT 1", "compare": "answer"}, "compare"),
        ({"database": "a", "query": "SELECT 1", "rows": [[True]]}, "rows"),
    ],
)
def test_sql_specs_are_validated(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        run_kind("sql_query", **spec)
