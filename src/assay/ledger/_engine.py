"""One SQLAlchemy engine per store, set up for its dialect.

SQLite: WAL journal (readers never block the writer), ``synchronous=NORMAL`` (a commit survives
a crash of the process, ``kill -9`` included; a power loss or OS crash can lose the last
commits, never corrupt the file), a 60 s busy timeout, and writes in ``BEGIN IMMEDIATE``
transactions, so two processes appending at once queue on the file's write lock instead of
failing with "database is locked" when a read transaction tries to upgrade. Python's sqlite3
module is told to leave transactions alone (``isolation_level=None``) and SQLAlchemy's ``begin``
event emits the BEGIN itself: ``IMMEDIATE`` when the connection carries the ``immediate``
execution option (appends, migrations), plain (deferred, a read snapshot) otherwise.

PostgreSQL (psycopg 3): default READ COMMITTED; writers serialise on an advisory transaction
lock (``LOCK_KEY``) taken by the appender, so the chain stays one line.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

BUSY_TIMEOUT = 60.0
"""Seconds a SQLite writer waits for another process's write lock before giving up."""
LOCK_KEY = 0x61737361795F6C67  # "assay_lg"
"""The PostgreSQL advisory lock every append and migration takes."""


def make_engine(url: str) -> sa.Engine:
    """The engine for ``url`` (already validated by ``Config``)."""
    if url.startswith("sqlite"):
        _private_file(url.removeprefix("sqlite:///"))
        engine = sa.create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT, "check_same_thread": False}
        )
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return sa.create_engine(url, pool_pre_ping=False)


def _private_file(path: str) -> None:
    """Create a new SQLite file 0600 (its -wal and -shm files follow its mode): entries hold
    participants' summaries and evidence, not for other local users. An existing file is left
    as it is; a folder that does not exist is reported when the store is opened."""
    with contextlib.suppress(FileExistsError, FileNotFoundError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's begin event starts transactions
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA cache_size = -65536")
    finally:
        cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    immediate = connection.get_execution_options().get("immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
