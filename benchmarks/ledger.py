"""Ledger throughput: chained appends and the chain walk, on SQLite and PostgreSQL, in one run.

    .venv/bin/python benchmarks/ledger.py                        # 100,000-row verify, 2,000 appends
    .venv/bin/python benchmarks/ledger.py --rows 5000 --appends 300        # a quick look
    .venv/bin/python benchmarks/ledger.py --postgres none                  # SQLite only
    .venv/bin/python benchmarks/ledger.py --postgres postgresql+psycopg://u@127.0.0.1:5432/db

``--postgres auto`` (the default) starts a throwaway cluster on 127.0.0.1 (tests/ledger/
cluster.py: fsync off, so its figures are an upper bound) when PostgreSQL is installed, and
says so when it is not. A given URL must name an empty database the benchmark may fill.

Per store it prints: single-entry appends/s through ``Ledger.append`` (each its own
transaction: lock, read the head, hash, insert, commit), against a plain driver INSERT loop with
no chain, one transaction per row, on the same kind of store in the same run (the ratio is what
the chain and the ledger cost; these machines are noisy: trust ratios, not absolute rates);
three-entry appends/s (a run's entries recorded in one transaction); and
the time ``Ledger.verify`` takes over ``--rows`` rows (target: 100,000 in under 2 s), beside the
time a plain driver read of the same rows takes (the part no walk can avoid). SQLite runs
in WAL with ``synchronous=NORMAL`` on both sides. Then the platform on the same store: runs of
an answer-check contract recorded per second (target: 2,000 on SQLite), in batches of 1,000 and
of 100 (``Platform.submit_many``, how a training loop records a step's rollouts) and one
``submit`` at a time,
against the same check run without recording anything; and seats of a review stage claimed per
second by 8 claimers at once. Exits 1 when a chain does not verify.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from assay import Config
from assay.ledger import Ledger, NewEntry

ROOT = Path(__file__).resolve().parents[1]
VERIFY_TARGET = 2.0
"""Seconds ``verify`` may take over 100,000 rows."""
BATCH = 1000
"""Entries per append while filling the store for ``verify``."""
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _entry(n: int) -> NewEntry:
    """An entry shaped like the platform's: a run's stage with a short evidence body."""
    return NewEntry(
        kind="stage.concluded",
        subject=f"run-{n:08d}",
        problem=f"problem-{n % 50}",
        participant=f"user-{n % 200}",
        at=T0 + timedelta(microseconds=n),
        body={
            "stage": "answers",
            "status": "verified",
            "mechanism": "sandbox",
            "checker": {"kind": "answer_number", "assay": "0.1.0"},
            "evidence": {"sha256": f"{n:064x}", "n": n},
        },
    )


CHUNK = 50
"""Appends timed at a time, alternating between the ledger and the plain loop."""


def _alternating(
    count: int, first: Callable[[int], object], second: Callable[[int], object]
) -> tuple[float, float]:
    """Rates per second of ``first`` and ``second`` over ``count`` calls each, timed in
    alternating chunks so both see the same machine (these machines are shared and noisy)."""
    spent = [0.0, 0.0]
    for start in range(0, count, CHUNK):
        for side, action in enumerate((first, second)):
            begin = time.perf_counter()
            for n in range(start, min(start + CHUNK, count)):
                action(n)
            spent[side] += time.perf_counter() - begin
    return count / spent[0], count / spent[1]


@contextlib.contextmanager
def _raw_sqlite(folder: Path) -> Iterator[Callable[[int], None]]:
    """A plain sqlite3 INSERT, one transaction per row: same table and indexes, no chain."""
    connection = sqlite3.connect(folder / "raw.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute(
        "CREATE TABLE history (seq INTEGER PRIMARY KEY, kind TEXT, subject TEXT, problem TEXT, "
        "participant TEXT, at TEXT, body TEXT, prev_hash TEXT, hash TEXT)"
    )
    for column in ("kind", "subject", "problem", "participant"):
        connection.execute(f"CREATE INDEX history_{column} ON history ({column})")
    body = _entry(0).model_dump_json(include={"body"})

    def insert(n: int) -> None:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (n + 1, "stage.concluded", f"run-{n}", "p", "u", "2026", body, "0" * 64, "1" * 64),
        )
        connection.execute("COMMIT")

    try:
        yield insert
    finally:
        connection.close()


@contextlib.contextmanager
def _raw_postgres(url: str) -> Iterator[Callable[[int], None]]:
    """A plain psycopg INSERT into a scratch table, one transaction per row, no chain."""
    import psycopg

    body = _entry(0).model_dump_json(include={"body"})
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as connection:
        connection.execute(
            "CREATE TABLE raw_history (seq BIGINT PRIMARY KEY, kind TEXT, subject TEXT, "
            "problem TEXT, participant TEXT, at TEXT, body TEXT, prev_hash TEXT, hash TEXT)"
        )
        connection.commit()

        def insert(n: int) -> None:
            connection.execute(
                "INSERT INTO raw_history VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (n + 1, "stage.concluded", f"run-{n}", "p", "u", "2026", body, "0" * 64, "1" * 64),
            )
            connection.commit()

        try:
            yield insert
        finally:
            connection.execute("DROP TABLE raw_history")
            connection.commit()


def _raw_fetch(url: str) -> float:
    """Seconds a plain driver read of every history row takes (the floor under ``verify``)."""
    columns = "seq, kind, subject, problem, participant, at, body, prev_hash, hash"
    query = f"SELECT {columns} FROM history ORDER BY seq"
    start = time.perf_counter()
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            cursor = connection.execute(query)
            while cursor.fetchmany(10_000):
                pass
        finally:
            connection.close()
    else:
        import psycopg

        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain) as pg, pg.cursor(name="raw_walk") as cursor:
            cursor.itersize = 10_000
            cursor.execute(query)
            while cursor.fetchmany(10_000):
                pass
    return time.perf_counter() - start


PROBLEM = """\
id: answer-42
title: Answer 42
statement: statement.md
contract:
  acceptance: The answer is the number 42.
  stages:
    - name: answer
      type: sandbox
      checks:
        - {kind: answer_number, value: 42}
"""
"""An answer-check contract: what a training loop records many of."""


def platform_rates(ledger: Ledger, runs: int) -> dict[str, float]:
    """Runs recorded per second on this store through ``Platform.submit`` (one submission per
    call: two transactions each) and ``Platform.submit_many`` (two transactions per batch, for
    batches of 100 and of 1,000: one training step's rollouts), and, in the same run, the same
    answer check run without recording anything."""
    from assay.checks import CheckContext, build_checks, run_checks
    from assay.platform import Platform, Work

    config = Config(db="sqlite:///unused.db")
    with tempfile.TemporaryDirectory(prefix="assay-problem-") as folder:
        Path(folder, "problem.yaml").write_text(PROBLEM)
        Path(folder, "statement.md").write_text("What is six times seven?\n")
        platform = Platform(ledger, config)
        platform.publish(Path(folder), "author")
    answers = ["The answer is 42.", "41"]
    platform.submit("answer-42", {}, answers[0], "policy")  # warm: caches, statements
    rates: dict[str, float] = {}
    start = time.perf_counter()
    for n in range(runs // 10):
        platform.submit("answer-42", {}, answers[n % 2], "policy")
    rates["single"] = (runs // 10) / (time.perf_counter() - start)
    for size in (100, 1000):
        count = max(runs, 5000) // size * size
        start = time.perf_counter()
        for first in range(0, count, size):
            works = [
                Work(participant="policy", summary=answers[n % 2])
                for n in range(first, first + size)
            ]
            platform.submit_many("answer-42", works)
        rates[f"batch{size}"] = count / (time.perf_counter() - start)
    checks = build_checks([{"kind": "answer_number", "value": 42}])
    start = time.perf_counter()
    for n in range(runs):
        run_checks(checks, CheckContext(answer=answers[n % 2]))
    rates["bare"] = runs / (time.perf_counter() - start)
    return rates


REVIEWED = """
id: review-42
title: Reviewed answers
statement: statement.md
contract:
  acceptance: One reviewer passes the answer.
  stages:
    - name: review
      type: review
      protocol:
        nodes:
          panel:
            type: review
            seats: 1
            eligible: {group: reviewers}
            rubric: Judge the answer.
            response_schema: {type: object, required: [verdict], properties: {verdict: {enum: [pass, fail]}}}
          vote: {type: reduce, op: m_of_n, inputs: [panel], m: 1, final: true}
"""
CLAIMERS = 8


def claim_rate(url: str, blobs: Path, seats: int) -> float:
    """Seat claims per second with ``CLAIMERS`` threads claiming at once, each on its own
    connection (``Platform.reviews.claim``: the review state read, then one guarded append),
    over ``seats`` open seats (one per submission, each thread its own share)."""
    import threading

    from assay.platform import Platform, Work
    from assay.review import seat_id

    config = Config(db=url, blobs=str(blobs))
    platforms = [Platform(Ledger.open(config), config) for _ in range(CLAIMERS)]
    with tempfile.TemporaryDirectory(prefix="assay-problem-") as folder:
        Path(folder, "problem.yaml").write_text(REVIEWED)
        Path(folder, "statement.md").write_text("What is six times seven?\n")
        platforms[0].publish(Path(folder), "author")
    for i in range(CLAIMERS):
        platforms[0].reviews.add_user(f"reviewer-{i}", ["reviewers"], "author")
    runs = platforms[0].submit_many("review-42", [Work(participant="p", summary="42")] * seats)
    ids = [seat_id(v.submission, v.run, "review", "panel", 1) for v in runs]  # type: ignore[union-attr]
    barrier = threading.Barrier(CLAIMERS + 1)

    def claimer(i: int) -> None:
        barrier.wait()
        for seat in ids[i::CLAIMERS]:
            platforms[i].reviews.claim(seat, f"reviewer-{i}")

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    rate = len(ids) / (time.perf_counter() - start)
    for platform in platforms:
        platform.close()
    return rate


def measure(name: str, url: str, blobs: Path, rows: int, appends: int) -> bool:
    """Print one store's figures; False when its chain does not verify."""
    with Ledger.open(Config(db=url, blobs=str(blobs))) as ledger:
        ledger.append(_entry(0))  # warm: connection, statements
        entries = [_entry(n + 1) for n in range(appends)]  # built before the clock, as raw's are
        if name == "sqlite":
            baseline, raw_loop = "plain sqlite3 INSERT loop", _raw_sqlite(blobs.parent)
        else:
            baseline, raw_loop = "plain psycopg INSERT loop", _raw_postgres(url)
        with raw_loop as insert:
            chained, raw = _alternating(appends, lambda n: ledger.append(entries[n]), insert)
        triples = [entries[n : n + 3] for n in range(0, appends - 2, 3)]
        start_time = time.perf_counter()
        for triple in triples:  # a run's three entries in one transaction
            ledger.append(*triple)
        grouped = len(triples) / (time.perf_counter() - start_time)
        filled = ledger.verify().rows
        for start in range(filled, rows, BATCH):
            ledger.append(*(_entry(n) for n in range(start, min(start + BATCH, rows))))
        timings, fetches = [], []
        for _ in range(2):  # alternating with the plain read, best of two each
            start_time = time.perf_counter()
            report = ledger.verify()
            timings.append(time.perf_counter() - start_time)
            fetches.append(_raw_fetch(url))
        rates = platform_rates(ledger, appends)
    claims = claim_rate(url, blobs, max(CLAIMERS, appends // 10))
    seconds = min(timings)
    per_100k = seconds * 100_000 / max(report.rows, 1)
    print(
        f"{name:10} appends   {chained:8.0f}/s chained, one entry per transaction "
        f"({1e6 / chained:.0f} us each); {baseline} {raw:8.0f}/s; ratio {raw / chained:.2f}x"
    )
    print(
        f"{name:10} appends   {grouped:8.0f}/s of three entries in one transaction "
        f"({3 * grouped:.0f} entries/s): one run's entries appended together"
    )
    print(
        f"{name:10} verify    {report.rows:,} rows in {seconds:.3f} s "
        f"({per_100k:.2f} s per 100,000; target < {VERIFY_TARGET:g} s); intact: {report.intact}"
    )
    print(
        f"{name:10}   of which reading the rows: a plain driver read takes {min(fetches):.3f} s "
        f"({min(fetches) / seconds:.0%} of verify)"
    )
    print(
        f"{name:10} platform  {rates['batch1000']:8.0f} runs recorded/s in batches of 1,000, "
        f"{rates['batch100']:.0f}/s in batches of 100 (submit_many), {rates['single']:.0f}/s one "
        f"submit at a time (target >= 2,000 on SQLite); the same check unrecorded: "
        f"{rates['bare']:.0f}/s"
    )
    print(f"{name:10} review    {claims:8.0f} seat claims/s, {CLAIMERS} claimers at once")
    return report.intact


@contextlib.contextmanager
def _postgres(choice: str) -> Iterator[str | None]:
    """The PostgreSQL URL to use (a fresh database), or None (with the reason printed)."""
    if choice == "none":
        yield None
        return
    if choice != "auto":
        yield choice
        return
    sys.path.insert(0, str(ROOT))
    from tests.ledger.cluster import ClusterFailed, postgres_bindir, throwaway_cluster

    if postgres_bindir() is None:
        print("postgresql skipped: PostgreSQL is not installed (./scripts/setup installs it)")
        yield None
        return
    try:
        with throwaway_cluster() as server:
            yield f"{server}/postgres"
    except ClusterFailed as exc:
        print(f"postgresql skipped: {exc}")
        yield None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows verify walks")
    parser.add_argument("--appends", type=int, default=2_000, help="single-entry appends timed")
    parser.add_argument("--postgres", default="auto", help="auto | none | a postgresql+psycopg URL")
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="assay-ledger-bench-") as scratch:
        folder = Path(scratch)
        sqlite_url = f"sqlite:///{folder}/sqlite/ledger.db"
        (folder / "sqlite").mkdir()
        ok &= measure("sqlite", sqlite_url, folder / "sqlite" / "blobs", args.rows, args.appends)
        with _postgres(args.postgres) as pg_url:
            if pg_url is not None:
                (folder / "pg").mkdir()
                ok &= measure(
                    "postgresql", pg_url, folder / "pg" / "blobs", args.rows, args.appends
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
