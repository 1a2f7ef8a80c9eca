"""``sql_query``: the verifier runs the query itself, on its own copy of the data.

The agent's claim about the data is never evidence. With ``compare: answer_query`` the agent's
final answer is itself run as SQL, but only as one read-only statement: the connection is opened
``mode=ro``, ``PRAGMA query_only`` is set, an authorizer allows nothing but reading (no ATTACH, no
PRAGMA, no writes), and a progress handler stops it at the time limit.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
    pass


class TooManyRows(Exception):
    pass


def _deny_all_but_reading(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


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
    connection: sqlite3.Connection, query: str, timeout: float, limit: int
) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + timeout
    timed_out = False

    def watchdog() -> int:
        nonlocal timed_out
        timed_out = time.monotonic() > deadline
        return 1 if timed_out else 0

    connection.set_progress_handler(watchdog, 2000)
    try:
        cursor = connection.execute(query)
        rows = cursor.fetchmany(limit + 1)
    except sqlite3.OperationalError:
        if timed_out:
            raise QueryTimeout(f"the query did not finish within {timeout:g}s") from None
        raise
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
        except (QueryTimeout, TooManyRows) as exc:
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
                actual = _run(connection, answer, timeout, limit)
            except QueryTimeout as exc:
                if spec.limits_are_rules:
                    return Outcome.refuted(
                        f"the answer query: {exc}, and this check's rules make the time limit "
                        "part of the task"
                    )
                return Outcome.inconclusive(f"the answer query: {exc}")
            except TooManyRows as exc:
                return Outcome.refuted(f"the answer query: {exc}; expected {len(expected)}")
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
