"""The ledger: the one object that opens the store, appends chained entries and walks the chain.

No other module opens a database. An append is one transaction under the store's write lock
(SQLite ``BEGIN IMMEDIATE``; PostgreSQL ``pg_advisory_xact_lock``): it reads the head, numbers
and hashes the new rows after it, inserts them and commits, so the chain stays one line however
many processes append, and a crash leaves all of an append or none of it.

SQLAlchemy owns the engine, its pool and its per-connection setup; the hot paths (``append``,
``find``, the ``verify`` walk) send fixed SQL straight to the driver
on a pooled connection, because SQLAlchemy's per-statement machinery cost about as much as the
database's own work for a one-row append (measured: benchmarks/ledger.py). Rows are plain
tuples; there are no ORM objects anywhere.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal

import sqlalchemy as sa

from assay._config import Config
from assay._errors import InvalidInput
from assay._wire import unvalidated
from assay.ledger._blobs import BlobStore
from assay.ledger._chain import GENESIS, Row, at_text, body_text, parse_at, row_hash, walk
from assay.ledger._engine import LOCK_KEY, make_engine
from assay.ledger._errors import LedgerError
from assay.ledger._migrate import upgrade
from assay.ledger._models import ChainReport, Entry, NewEntry
from assay.ledger._tables import history

_c = history.c
_COLUMNS = (
    _c.seq,
    _c.kind,
    _c.subject,
    _c.problem,
    _c.participant,
    _c.at,
    _c.body,
    _c.prev_hash,
    _c.hash,
)
Reader = Callable[..., list[Entry]]
"""``find``'s signature (keyword filters), as a guard receives it inside an append."""
_BATCH = 10_000
"""Rows fetched at a time while walking the chain (PostgreSQL: a server-side cursor)."""


class _Statements:
    """The driver-level SQL of the hot paths, in the dialect's parameter style."""

    def __init__(self, dialect: str) -> None:
        mark = "?" if dialect == "sqlite" else "%s"
        columns = ", ".join(column.name for column in _COLUMNS)
        self.lock = f"SELECT pg_advisory_xact_lock({LOCK_KEY})"
        self.head = "SELECT seq, hash FROM history ORDER BY seq DESC LIMIT 1"
        self.insert = f"INSERT INTO history ({columns}) VALUES ({', '.join([mark] * 9)})"
        self.walk = f"SELECT {columns} FROM history ORDER BY seq"
        self.select = f"SELECT {columns} FROM history"
        self.mark = mark


class Ledger:
    """An open store: ``Ledger.open()``, then ``append`` / ``find`` / ``verify``; ``close``
    (or ``with``) when done."""

    def __init__(self, engine: sa.Engine, blobs: BlobStore) -> None:
        self._engine = engine
        self.blobs = blobs
        self.dialect: Literal["sqlite", "postgresql"] = (
            "postgresql" if engine.dialect.name == "postgresql" else "sqlite"
        )
        self._sql = _Statements(self.dialect)
        self._write_lock = threading.Lock()
        self._writer: Any = None
        """The connection appends use, kept between appends (see ``_driver``)."""

    @classmethod
    def open(cls, config: Config | None = None) -> Ledger:
        """Open the store ``config.db`` names (``ASSAY_DB``; default ``sqlite:///assay.db``),
        bringing its schema to head first (safe when processes open a fresh store at once)."""
        config = config or Config.from_env()
        engine = make_engine(config.db)
        try:
            upgrade(engine)
        except sa.exc.SQLAlchemyError as exc:
            engine.dispose()
            raise LedgerError(
                f"the store {_masked(engine)} cannot be opened: {_reason(exc)}"
            ) from None
        return cls(engine, BlobStore(config.blob_folder()))

    @property
    def url(self) -> str:
        """The store's URL, its password masked."""
        return _masked(self._engine)

    def append(
        self, *entries: NewEntry, guard: Callable[[Reader], None] | None = None
    ) -> list[Entry]:
        """Append ``entries`` in order, in one transaction: all of them or none.

        ``guard``, when given, runs inside the transaction after the write lock is taken, with a
        ``find`` that reads the store as this append will extend it; whatever it raises aborts
        the append. That is how a rule over what is already stored (an allowance) holds when
        several processes append at once: no other append can land between its read and this
        write."""
        if not entries:
            return []
        now: datetime | None = None
        prepared: list[tuple[NewEntry, datetime, str, str]] = []
        last: datetime | None = None
        stamp, stored_at = "", datetime.min
        for entry in entries:
            at = entry.at
            if at is None:
                at = now = now or datetime.now(UTC)
            if at is not last:  # a batch's entries share a few moments: format each once
                last, stamp, stored_at = at, at_text(at), at.astimezone(UTC)
            prepared.append((entry, stored_at, stamp, body_text(entry.body)))
        appended: list[Entry] = []
        rows: list[tuple[object, ...]] = []
        with self._driver(write=True) as cursor:
            if self.dialect == "postgresql":
                cursor.execute(self._sql.lock)
            cursor.execute(self._sql.head)
            head = cursor.fetchone()
            seq, prev = (int(head[0]), str(head[1])) if head is not None else (0, GENESIS)
            if guard is not None:
                guard(functools.partial(self._select, cursor))
            for entry, at, stamp, body in prepared:
                seq += 1
                kind, subject, problem, participant = (
                    entry.kind, entry.subject, entry.problem, entry.participant,
                )  # fmt: skip
                digest = row_hash(seq, kind, subject, problem, participant, stamp, body, prev)
                rows.append((seq, kind, subject, problem, participant, stamp, body, prev, digest))
                appended.append(
                    _stored(
                        seq=seq,
                        kind=kind,
                        subject=subject,
                        problem=problem,
                        participant=participant,
                        at=at,
                        body=entry.body,
                        prev_hash=prev,
                        hash=digest,
                    )
                )
                prev = digest
            if len(rows) == 1:
                cursor.execute(self._sql.insert, rows[0])
            else:
                cursor.executemany(self._sql.insert, rows)
        return appended

    def find(
        self,
        *,
        kind: str | tuple[str, ...] | None = None,
        subject: str | None = None,
        problem: str | None = None,
        participant: str | None = None,
        since: datetime | None = None,
        newest: int | None = None,
    ) -> list[Entry]:
        """The entries that match every filter given, in chain order (``since``: at or after;
        ``newest``: only the last that many)."""
        with self._driver(write=False) as cursor:
            return self._select(cursor, kind, subject, problem, participant, since, newest)

    def open_subjects(self, opening: tuple[str, ...], closing: tuple[str, ...]) -> list[str]:
        """Subjects with more ``opening`` entries than ``closing`` ones: what is still open
        (a run started and not finished), counted by the database without reading bodies."""
        mark = self._sql.mark
        sql = (
            f"SELECT subject FROM history WHERE kind IN ({', '.join([mark] * len(opening + closing))})"
            f" GROUP BY subject HAVING SUM(CASE WHEN kind IN ({', '.join([mark] * len(opening))})"
            " THEN 1 ELSE -1 END) > 0"
        )
        with self._driver(write=False) as cursor:
            cursor.execute(sql, [*opening, *closing, *opening])
            return sorted(str(row[0]) for row in cursor.fetchall())

    def _select(
        self,
        cursor: Any,
        kind: str | tuple[str, ...] | None = None,
        subject: str | None = None,
        problem: str | None = None,
        participant: str | None = None,
        since: datetime | None = None,
        newest: int | None = None,
    ) -> list[Entry]:
        """``find`` on an open driver cursor (fixed SQL with parameters, no SQLAlchemy: a
        find is on every submission's path)."""
        mark = self._sql.mark
        where: list[str] = []
        values: list[object] = []
        if isinstance(kind, str):
            where.append(f"kind = {mark}")
            values.append(kind)
        elif kind is not None:
            where.append(f"kind IN ({', '.join([mark] * len(kind))})")
            values.extend(kind)
        for column, value in (("subject", subject), ("problem", problem)):
            if value is not None:
                where.append(f"{column} = {mark}")
                values.append(value)
        if participant is not None:
            where.append(f"participant = {mark}")
            values.append(participant)
        if since is not None:
            if since.utcoffset() is None:
                raise InvalidInput("must carry a time zone (UTC)", where="since")
            where.append(f"at >= {mark}")
            values.append(at_text(since))
        sql = self._sql.select + (" WHERE " + " AND ".join(where) if where else "")
        if newest is not None:
            cursor.execute(f"{sql} ORDER BY seq DESC LIMIT {int(newest)}", values)
            return [_entry(row) for row in reversed(cursor.fetchall())]
        cursor.execute(f"{sql} ORDER BY seq", values)
        return [_entry(row) for row in cursor.fetchall()]

    def verify(self, *, blobs: bool = False) -> ChainReport:
        """Walk the whole chain in seq order (see ``ChainReport`` for what intact proves); with
        ``blobs``, also re-hash every stored blob against its name."""
        with self._driver(write=False, stream=True) as cursor:
            cursor.execute(self._sql.walk)
            report = walk(_fetched(cursor))
        if not blobs or not report.intact:
            return report
        checked, bad = self.blobs.audit()
        if bad is None:
            return report.model_copy(update={"blobs": checked})
        return report.model_copy(
            update={
                "blobs": checked,
                "intact": False,
                "problem": f"blob {bad} was edited: its bytes do not hash to its name",
            }
        )

    @contextlib.contextmanager
    def _driver(self, *, write: bool, stream: bool = False) -> Iterator[Any]:
        """A driver cursor inside one transaction (committed when ``write``, else rolled back).

        The hot paths (append, the walk) talk to the driver directly, on a connection from the
        engine's pool (so its setup events applied): SQLAlchemy's per-statement machinery costs
        several times the database's own work for a one-row insert (see ``_pipeline`` too). Appends keep one connection
        (``_writer``) and take turns on it under a thread lock (the store serialises writers
        anyway). A walk on PostgreSQL uses a server-side cursor, so memory stays flat however
        long the chain is."""
        error = self._engine.dialect.loaded_dbapi.Error
        with self._write_lock if write else contextlib.nullcontext():
            try:
                connection = self._writer if write else None
                if connection is None:
                    connection = self._engine.raw_connection()
            except sa.exc.SQLAlchemyError as exc:
                raise LedgerError(
                    f"the store {self.url} cannot be reached: {_reason(exc)}"
                ) from None
            healthy = False
            cursor: Any
            try:
                if self.dialect == "sqlite":
                    cursor = connection.cursor()
                    cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                elif stream:
                    cursor = connection.cursor(name="assay_walk")
                    cursor.itersize = _BATCH
                else:
                    cursor = connection.cursor()
                with self._pipeline(connection) if write else contextlib.nullcontext():
                    try:
                        yield cursor
                    finally:
                        cursor.close()
                    if write:
                        connection.commit()
                    else:
                        connection.rollback()
                healthy = True
            except error as exc:
                action = "the append to" if write else "reading"
                raise LedgerError(f"{action} {self.url} failed: {_reason(exc)}") from None
            finally:
                if not healthy:
                    with contextlib.suppress(Exception):
                        connection.rollback()
                if write and healthy:
                    self._writer = connection
                else:
                    if write:
                        self._writer = None
                    with contextlib.suppress(Exception):
                        connection.close()

    def _pipeline(self, connection: Any) -> contextlib.AbstractContextManager[Any]:
        """PostgreSQL: psycopg's pipeline mode, so an append's statements (BEGIN, the lock, the
        head; then the insert and COMMIT) travel in two round trips instead of five. The
        server still runs them one after another, each with its own snapshot, so the head is
        read after the lock is held."""
        if self.dialect != "postgresql":
            return contextlib.nullcontext()
        pipeline: contextlib.AbstractContextManager[Any] = connection.driver_connection.pipeline()
        return pipeline

    def close(self) -> None:
        """Release the store's connections."""
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        self._engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _stored(**fields: Any) -> Entry:
    """An Entry from fields the store itself produced (already valid: read back from the
    chain, or just hashed into it), set without validation (a batch of runs makes thousands)."""
    return unvalidated(Entry, fields)


def _entry(row: Any) -> Entry:
    seq, kind, subject, problem, participant, at, body, prev_hash, digest = row
    return _stored(
        seq=seq,
        kind=kind,
        subject=subject,
        problem=problem,
        participant=participant,
        at=parse_at(at),
        body=json.loads(body),
        prev_hash=prev_hash,
        hash=digest,
    )


def _fetched(cursor: Any) -> Iterator[list[Row]]:
    while batch := cursor.fetchmany(_BATCH):
        yield batch


def _masked(engine: sa.Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def _reason(exc: Exception) -> str:
    """The driver's own message, one line, without SQLAlchemy's statement dump."""
    original = getattr(exc, "orig", None)
    text = str(original if original is not None else exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
