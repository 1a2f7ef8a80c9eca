"""Someone with the database edits, deletes or reorders history rows with raw SQL (the
append-only triggers dropped first, as the file's holder could): ``verify`` names the first row
that gives it away and says how. The triggers themselves refuse changes through SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.ledger.helpers import fill, open_ledger, raw_sql, tamper

ROWS = 8

SWAP = (  # rows 4 and 5 trade places
    "UPDATE history SET seq = -4 WHERE seq = 4",
    "UPDATE history SET seq = 4 WHERE seq = 5",
    "UPDATE history SET seq = 5 WHERE seq = -4",
)


@pytest.mark.parametrize(
    ("statements", "bad_seq", "problem"),
    [
        pytest.param(
            ["UPDATE history SET body = '{\"n\":999}' WHERE seq = 4"],
            4,
            "row 4 was edited: its hash does not match its contents",
            id="edit-body",
        ),
        pytest.param(
            ["UPDATE history SET participant = 'someone-else' WHERE seq = 1"],
            1,
            "row 1 was edited: its hash does not match its contents",
            id="edit-participant-first-row",
        ),
        pytest.param(
            ["UPDATE history SET at = '2020-01-01T00:00:00.000000Z' WHERE seq = 8"],
            8,
            "row 8 was edited: its hash does not match its contents",
            id="edit-time-last-row",
        ),
        pytest.param(
            # the same JSON written differently is still an edit: the stored bytes are hashed
            ["UPDATE history SET body = REPLACE(body, '\"n\":3', '\"n\": 3') WHERE seq = 3"],
            3,
            "row 3 was edited: its hash does not match its contents",
            id="edit-whitespace-only",
        ),
        pytest.param(
            ["DELETE FROM history WHERE seq = 4"],
            5,
            "row 5: prev_hash does not match row 3 (a row was deleted or rows were reordered)",
            id="delete-middle",
        ),
        pytest.param(
            ["DELETE FROM history WHERE seq = 1"],
            2,
            "row 2: prev_hash does not match the genesis (a row was deleted or rows were "
            "reordered)",
            id="delete-first",
        ),
        pytest.param(
            list(SWAP),
            4,
            "row 4: prev_hash does not match row 3 (a row was deleted or rows were reordered)",
            id="reorder",
        ),
        pytest.param(
            # the attacker re-links row 5 to row 3 after deleting row 4: row 5 is then edited
            [
                "DELETE FROM history WHERE seq = 4",
                "UPDATE history SET prev_hash = (SELECT hash FROM history WHERE seq = 3) "
                "WHERE seq = 5",
            ],
            5,
            "row 5 was edited: its hash does not match its contents",
            id="delete-and-relink",
        ),
    ],
)
def test_verify_names_the_first_tampered_row(
    db_url: str, tmp_path: Path, statements: list[str], bad_seq: int, problem: str
) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        fill(ledger, ROWS)
        before = ledger.verify()
        tamper(db_url, *statements)
        report = ledger.verify()
        good = [e for e in ledger.find() if e.seq < bad_seq]
    assert before.intact and before.rows == ROWS
    assert not report.intact
    assert report.first_bad_seq == bad_seq
    assert report.problem == problem
    assert report.rows == len(good)
    assert report.head == (good[-1].hash if good else None)


def test_an_intact_chain_reports_its_rows_and_head(db_url: str, tmp_path: Path) -> None:
    with open_ledger(db_url, tmp_path) as ledger:
        empty = ledger.verify()
        fill(ledger, ROWS)
        report = ledger.verify()
        last = ledger.find()[-1]
    assert empty.intact and empty.rows == 0 and empty.head is None
    assert report.intact and report.rows == ROWS and report.head == last.hash
    assert report.first_bad_seq is None and report.problem is None


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE history SET body = '{}' WHERE seq = 2",
        "UPDATE history SET seq = seq + 100",
        "DELETE FROM history WHERE seq = 2",
        "DELETE FROM history",
        "TRUNCATE history",
    ],
)
def test_the_database_refuses_changes_to_history(
    db_url: str, tmp_path: Path, statement: str
) -> None:
    if statement.startswith("TRUNCATE") and db_url.startswith("sqlite"):
        pytest.skip("SQLite has no TRUNCATE (its DELETE without WHERE is refused above)")
    with open_ledger(db_url, tmp_path) as ledger:
        fill(ledger, 3)
        with pytest.raises(sa.exc.DBAPIError, match="append-only"):
            raw_sql(db_url, statement)
        report = ledger.verify()
    assert report.intact and report.rows == 3
