"""Shared by the ledger's tests: open a store, fill it, and tamper with it as an attacker would."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

from assay import Config
from assay.ledger import Ledger, NewEntry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def open_ledger(db_url: str, tmp_path: Path) -> Ledger:
    return Ledger.open(Config(db=db_url, blobs=str(tmp_path / "blobs")))


def entry(n: int, **fields: object) -> NewEntry:
    values: dict[str, object] = {
        "kind": "run.started" if n % 2 else "run.finished",
        "subject": f"run-{n}",
        "body": {"n": n, "text": f"entry {n} ✓", "nested": {"b": [1, 2.5, None], "a": True}},
        "problem": f"problem-{n % 3}",
        "participant": f"user-{n % 2}",
        "at": T0 + timedelta(seconds=n),
    }
    values.update(fields)
    return NewEntry.model_validate(values)


def fill(ledger: Ledger, rows: int) -> None:
    ledger.append(*(entry(n) for n in range(1, rows + 1)))


def raw_sql(db_url: str, *statements: str) -> None:
    """Run statements on the store behind the ledger's back, in one transaction."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.exec_driver_sql(statement)
    finally:
        engine.dispose()


def tamper(db_url: str, *statements: str) -> None:
    """Run raw SQL with the append-only triggers out of the way, as someone holding the
    database file (or the table owner's rights) could."""
    if db_url.startswith("sqlite"):
        disable = ("DROP TRIGGER history_no_update", "DROP TRIGGER history_no_delete")
    else:
        disable = ("ALTER TABLE history DISABLE TRIGGER USER",)
    raw_sql(db_url, *disable, *statements)
