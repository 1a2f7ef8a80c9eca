"""``sql_query``: the verifier runs the query itself, on its own copy of the data.

The agent's claim about the data is never evidence. With ``compare: answer_query`` the agent's
final answer is itself run as SQL, but only as one read-only statement: the connection is opened
``mode=ro``, ``PRAGMA query_only`` is set, an authorizer allows nothing but reading (no ATTACH, no
PRAGMA, no writes, no ``fts3_tokenizer``), and the time limit binds three ways: a progress
handler every few opcodes, a timer thread that interrupts the connection at the deadline, and a
cap on the length of any value and on the width of any result (one opcode such as
``printf('%.*c', 1e9, 'x')`` can otherwise run for seconds, and its value exhaust memory). A
result too large to hold is a finding about the answer (refuted), never ``error``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import quote

from pydantic import Field, model_validator

from assay.checks._context import CheckContext
from assay.checks._kinds._common import answer_or_outcome, shorten
from assay.checks._numbers import NumberProblem, exact, normalize, one_number
from assay.checks._registry import kind
from assay.checks._spec import NonBlank, Spec
from assay.status import Outcome

Scalar = int | float | str | None

_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


class SqlSpec(Spec):
    """A query the verifier runs on its own copy of a database, and what its rows must be."""

    verifier_fields = ("database",)
    database: NonBlank
    """SQLite file, relative to the task file's folder: the verifier's copy, not the workspace."""
    query: NonBlank
    """The verifier's query."""
    rows: list[list[Scalar]] | None = None
    """Expected rows, literally (JSON scalars; SQLite has no booleans)."""
    compare: Literal["answer_query", "answer_value"] | None = None
    """Compare against the agent's answer run as a query, or read as one value."""
    ordered: bool = False
    """Compare rows in order; otherwise as bags (duplicates count)."""
    max_rows: int | None = Field(None, gt=0)
    """Rows read per query; defaults to the configured limit."""
    limits_are_rules: bool = False
    """True: an answer query that runs past the time limit refutes (a wrong query that never
    ends, such as a runaway recursive CTE, must not turn into a masked result); otherwise it is
    inconclusive. The verifier's own query running out of time is always inconclusive."""

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.rows is None) == (self.compare is None):
            raise ValueError("give exactly one of 'rows' (expected rows) or 'compare'")
        return self


class QueryTimeout(Exception):
    """A query ran past ``sql_timeout``: no conclusion about the rows it would have given."""


class TooManyRows(Exception):
    """A query gave more than ``sql_max_rows`` rows: read no further than the limit."""


class TooLarge(Exception):
    """A query gave more bytes of values than assay reads: read no further than the cap."""


_PROGRESS_PERIOD = 100
"""VM opcodes between two looks at the clock."""
_MIN_VALUE_CAP = 1 << 16
"""Longest string or blob an answer query may build (bytes), unless the expected rows hold a
longer one: SQLite's own maximum is 1e9, and one opcode on such values (replace, instr) can
run for minutes between two looks at the clock."""
_FORMAT = re.compile(r"\*|[0-9]{5}")
_MAX_FORMAT = 1000
_MAX_PATTERN = 1000
"""Longest LIKE/GLOB pattern in an answer query: matching is O(text x pattern) in one opcode."""
_MIN_COLUMN_CAP = 100
_MIN_BYTES_CAP = 64 << 20
"""Total bytes of values an answer query may return, unless the expected rows hold more."""
_DENIED_FUNCTIONS = frozenset(["fts3_tokenizer", "load_extension"])


def _deny_all_but_reading(action: int, _arg1: Any, arg2: Any, *_: Any) -> int:
    if action == sqlite3.SQLITE_FUNCTION and str(arg2).lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY  # fts3_tokenizer registers a raw C pointer as a tokenizer
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes)) else 8


def _cap_answer(connection: sqlite3.Connection, expected: list[tuple[Any, ...]]) -> int:
    """Cap value length and result width for the answer query, from the expected rows (an
    honest answer never needs more than they hold); returns the total bytes it may return."""
    longest = max((_size(v) for row in expected for v in row), default=0)
    width = max((len(row) for row in expected), default=0)
    cap = max(_MIN_VALUE_CAP, 8 * longest)  # bytes: a character takes up to 4 in UTF-8
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, cap)
    connection.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, max(_MIN_COLUMN_CAP, 2 * width))
    connection.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, _MAX_PATTERN)
    formatter = sqlite3.connect(":memory:", check_same_thread=False)
    formatter.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, cap)

    def bounded_printf(fmt: Any, *args: Any) -> Any:
        """SQLite's printf builds a '%.1000000000c' one character at a time in one opcode
        (even past the length cap): widths and precisions are bounded before it runs."""
        shown = fmt.decode("latin-1") if isinstance(fmt, bytes) else str(fmt)
        if len(shown) > _MAX_FORMAT or _FORMAT.search(shown):
            raise ValueError("printf: width, precision or format too large")
        marks = ", ".join("?" * (1 + len(args)))
        return formatter.execute(f"SELECT printf({marks})", (fmt, *args)).fetchone()[0]

    for name in ("printf", "format"):
        connection.create_function(name, -1, bounded_printf)
    total = sum(_size(v) for row in expected for v in row)
    return max(_MIN_BYTES_CAP, 4 * total)


@contextmanager
def _read_only(path: Path, timeout: float) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=timeout)
    try:
        connection.execute("PRAGMA query_only = ON")
        connection.set_authorizer(_deny_all_but_reading)
        yield connection
    finally:
        connection.close()


def _run(
    connection: sqlite3.Connection,
    query: str,
    timeout: float,
    limit: int,
    max_bytes: int | None = None,
) -> list[tuple[Any, ...]]:
    """Rows of ``query``, at most ``limit`` (TooManyRows) and ``max_bytes`` of values (TooLarge),
    within ``timeout`` seconds of wall clock (QueryTimeout)."""
    deadline = time.monotonic() + timeout
    timed_out = threading.Event()

    def watchdog() -> int:
        if time.monotonic() > deadline:
            timed_out.set()
        return 1 if timed_out.is_set() else 0

    def interrupt() -> None:
        timed_out.set()
        with suppress(sqlite3.Error):  # the query may have ended meanwhile
            connection.interrupt()

    connection.set_progress_handler(watchdog, _PROGRESS_PERIOD)
    timer = threading.Timer(timeout, interrupt)
    timer.daemon = True
    timer.start()
    rows: list[tuple[Any, ...]] = []
    total = 0
    try:
        cursor = connection.execute(query)
        while len(rows) <= limit and (batch := cursor.fetchmany(64)):
            rows += batch
            if max_bytes is not None:
                total += sum(_size(v) for row in batch for v in row)
                if total > max_bytes:
                    raise TooLarge(f"the query returned more than {max_bytes} bytes of values")
    except MemoryError:
        raise TooLarge("the query returned values too large to hold") from None
    except sqlite3.OperationalError:
        if timed_out.is_set():
            raise QueryTimeout(f"the query did not finish within {timeout:g}s") from None
        raise
    finally:
        timer.cancel()
    if timed_out.is_set():
        raise QueryTimeout(f"the query did not finish within {timeout:g}s")
    if len(rows) > limit:
        raise TooManyRows(f"the query returned more than {limit} rows")
    return rows


def _key(row: Sequence[Any]) -> tuple[tuple[str, Any], ...]:
    """Type-tagged row, so 1 (INTEGER), 1.0 (REAL) and '1' (TEXT) are different rows."""
    return tuple((type(v).__name__, v) for v in row)


def _same_rows(
    expected: list[tuple[Any, ...]], actual: list[tuple[Any, ...]], ordered: bool
) -> bool:
    if ordered:
        return [_key(r) for r in expected] == [_key(r) for r in actual]
    return Counter(map(_key, expected)) == Counter(map(_key, actual))


def _first_rows(rows: list[tuple[Any, ...]]) -> str:
    return "; ".join(shorten(repr(list(r)), 60) for r in rows[:3]) or "(none)"


def _rows_detail(
    expected: list[tuple[Any, ...]], actual: list[tuple[Any, ...]], ordered: bool
) -> str:
    detail = (
        f"rows differ{' (in order)' if ordered else ''}: expected {len(expected)} rows, got {len(actual)}; "
        f"first expected: {_first_rows(expected)}; first actual: {_first_rows(actual)}"
    )
    if not ordered:
        missing = Counter(map(_key, expected)) - Counter(map(_key, actual))
        extra = Counter(map(_key, actual)) - Counter(map(_key, expected))
        if missing:
            first = [v for _, v in next(iter(missing))]
            detail += f"; not in the answer: {shorten(repr(first), 60)}"
        if extra:
            first = [v for _, v in next(iter(extra))]
            detail += f"; not expected: {shorten(repr(first), 60)}"
    return detail


def _value_matches(expected: Any, answer: str) -> bool | Outcome:
    if isinstance(expected, bytes):
        return Outcome.error(
            "the verifier's query returned a BLOB, which cannot be compared to a text answer"
        )
    if expected is None:
        return answer.strip().upper() == "NULL"
    if isinstance(expected, str):
        return answer.strip() == expected
    try:
        number = one_number(normalize(answer))
    except NumberProblem as exc:
        return Outcome.refuted(str(exc))
    return number.value is not None and number.value == exact(expected)


@kind("sql_query", SqlSpec)
def sql_query(spec: SqlSpec, ctx: CheckContext) -> Outcome:
    """The verifier's ``query`` on its own database gives the expected rows.

    Expected rows come from ``rows``, from the agent's final answer run as one read-only query
    (``compare: answer_query``), or from the answer read as a single value
    (``compare: answer_value``; the query must give one row of one column). Rows compare as bags,
    type-strictly (1 is not 1.0 is not '1'), unless ``ordered``.
    """
    base = ctx.base_dir or Path.cwd()
    database = (base / spec.database).resolve()
    if not database.is_file():
        return Outcome.inconclusive(f"the verifier's database {spec.database!r} does not exist")
    timeout, limit = ctx.config.sql_timeout, spec.max_rows or ctx.config.sql_max_rows
    answer: str | None = None
    if spec.compare is not None:
        got = answer_or_outcome(ctx)
        if isinstance(got, Outcome):
            return got
        answer = got
    with _read_only(database, timeout) as connection:
        try:
            expected = _run(connection, spec.query, timeout, limit)
        except (QueryTimeout, TooManyRows, TooLarge) as exc:
            return Outcome.inconclusive(f"the verifier's query: {exc}")
        except sqlite3.Error as exc:
            return Outcome.error(f"the verifier's query failed: {exc}")
        if spec.compare == "answer_value":
            assert answer is not None
            if len(expected) != 1 or len(expected[0]) != 1:
                return Outcome.error(
                    "answer_value needs the verifier's query to return one row of one column; "
                    f"it returned {len(expected)} rows"
                )
            matched = _value_matches(expected[0][0], answer)
            if isinstance(matched, Outcome):
                return matched
            if matched:
                return Outcome.verified("the answer equals the value the verifier's query returns")
            return Outcome.refuted(
                f"the answer {shorten(answer.strip(), 60)!r} does not equal the value the verifier's query returns"
            )
        if spec.compare == "answer_query":
            assert answer is not None
            if not answer.strip():
                return Outcome.refuted("the answer is empty: give one SELECT statement")
            try:
                budget = _cap_answer(connection, expected)
                actual = _run(connection, answer, timeout, limit, budget)
            except QueryTimeout as exc:
                if spec.limits_are_rules:
                    return Outcome.refuted(
                        f"the answer query: {exc}, and this check's rules make the time limit "
                        "part of the task"
                    )
                return Outcome.inconclusive(f"the answer query: {exc}")
            except TooManyRows as exc:
                return Outcome.refuted(f"the answer query: {exc}; expected {len(expected)}")
            except TooLarge as exc:
                return Outcome.refuted(f"the answer query: {exc}; the expected rows are smaller")
            except UnicodeEncodeError:
                return Outcome.refuted(
                    "the answer query is not valid text (it holds a lone surrogate): "
                    "give one SELECT statement"
                )
            except (sqlite3.ProgrammingError, sqlite3.Warning) as exc:
                return Outcome.refuted(
                    f"the answer query was refused (give exactly one SELECT): {exc}"
                )
            except sqlite3.Error as exc:
                if "not authorized" in str(exc):
                    return Outcome.refuted(
                        "the answer query may only read: give one SELECT statement"
                    )
                return Outcome.refuted(f"the answer query failed: {exc}")
        else:
            assert spec.rows is not None
            actual, expected = expected, [tuple(r) for r in spec.rows]
    if _same_rows(expected, actual, spec.ordered):
        return Outcome.verified(f"the {len(actual)} rows match")
    return Outcome.refuted(_rows_detail(expected, actual, spec.ordered))
