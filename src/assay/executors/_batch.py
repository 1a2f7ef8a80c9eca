"""A batch file: one item per line in, one result per line out, in the same order, resumable.

In: JSON Lines, each non-blank line an item (see ``assay.episodes``). A line that cannot be an
item (not UTF-8, not JSON, longer than the line cap, an id an earlier line already used) is
answered with an ``error`` result naming its line and what is wrong, never judged, and never
stops the batch; a line whose item is invalid (a missing id, an unknown kind) gets the ``error``
result ``judge_item`` gives, naming the line and the field. Blank lines are skipped.

Out: one ``EpisodeResult`` JSON line per item line, in input order, written as each result and
all before it are known. So an output cut short by a kill is always a prefix of the full output
(plus, at worst, a partial last line).

Each result line also carries ``input_sha256``, the sha256 of the input line it answers, so a
verdict stays bound to exactly the work it judged.

Resume: given an output file that already holds results, the batch first drops a partial last
line, then checks that the output's results answer the input's first lines, in order, by id and
by ``input_sha256`` (an output of another input, or of a line rewritten since, is refused,
naming the first result that differs), skips those lines and appends the rest. A line answered with an error stays answered; delete the output to judge
everything again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from assay._errors import AssayError, InvalidInput
from assay._strict import StrictJSONError, loads_strict
from assay.episodes import item_id
from assay.executors._base import INPUT_DIGEST, Executor, Job, Judged
from assay.status import Status

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest input line read as an item; a longer one is an error result (it is not read whole)."""
BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark: Windows tools (PowerShell's ``Out-File``, Excel's "CSV UTF-8") start
a file with it and RFC 8259 lets a parser ignore it, so it is dropped from line 1 (only) before
the line is decoded and digested: the item is judged under its id, and its ``input_sha256`` is
the same with or without the mark."""
FLUSH_EVERY = 0.1
"""Seconds between flushes of the output: a reader (or a resume) sees results within this."""


@dataclass
class BatchSummary:
    """What a batch run did: counts per status over the whole output, and this run's share."""

    counts: dict[Status, int] = field(default_factory=lambda: dict.fromkeys(Status, 0))
    judged: int = 0
    """Lines judged by this run."""
    resumed: int = 0
    """Lines already answered in the output, skipped."""
    seconds: float = 0.0

    def line(self) -> str:
        """One line for people (stderr): totals per status, and this run's rate."""
        total = sum(self.counts.values())
        per = ", ".join(f"{self.counts[s]} {s.value}" for s in Status)
        rate = self.judged / self.seconds if self.seconds > 0 else 0.0
        resumed = f", {self.resumed} already in the output" if self.resumed else ""
        return (
            f"assay batch: {total} results: {per} ({self.judged} judged now{resumed}) "
            f"in {self.seconds:.1f} s, {rate:,.0f} items/s"
        )


def count_items(path: Path) -> int:
    """The number of non-blank lines (for a progress bar's total), read in blocks."""
    count = 0
    with path.open("rb") as file:
        for number, raw in enumerate(file):
            count += bool((raw.removeprefix(BOM) if number == 0 else raw).strip())
    return count


def read_jobs(path: Path, seen: set[str] | None = None) -> Generator[Job, None, None]:
    """One ``Job`` per non-blank line of ``path``, named ``line N`` and carrying the sha256 of
    the line (surrounding whitespace, and a byte-order mark on line 1, aside); ``seen``
    collects ids."""
    seen = set() if seen is None else seen
    with path.open("rb") as file:
        number = 0
        while True:
            raw = file.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if number == 1:
                raw = raw.removeprefix(BOM)
            where = f"line {number}"
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                digest = hashlib.sha256(raw.lstrip())
                while (rest := file.readline(1 << 20)) and not rest.endswith(b"\n"):
                    digest.update(rest)  # the rest of an overlong line, never held whole
                digest.update(rest.rstrip())
                refusal = f"longer than {MAX_LINE_BYTES} bytes; not read"
                yield Job(None, where, refusal, digest.hexdigest())
                continue
            if not raw.strip():
                continue
            yield _job(raw, where, seen)


def _job(raw: bytes, where: str, seen: set[str]) -> Job:
    digest = hashlib.sha256(raw.strip()).hexdigest()
    try:
        data = loads_strict(raw.decode("utf-8"), max_depth=None)  # an envelope, as the service's
    except UnicodeDecodeError as exc:
        return Job(None, where, f"not UTF-8 (byte {exc.start})", digest)
    except StrictJSONError as exc:
        return Job(None, where, f"not valid JSON: {exc}", digest)
    ident = item_id(data)
    if ident and ident in seen:
        refusal = f"id: {ident!r} is the id of an earlier line; ids must be unique"
        return Job(data, where, refusal, digest)
    if ident:
        seen.add(ident)
    return Job(data, where, digest=digest, from_json=True)


Record = tuple[str, Status, str | None]
"""A result already in an output: its id, status and ``input_sha256`` (None when absent)."""


def read_output(path: Path) -> list[Record]:
    """The records of the results already in ``path``; a partial last line (a run killed
    mid-write) is cut off the file, so the next result starts on a line of its own."""
    records: list[Record] = []
    keep = 0
    with path.open("rb") as file:
        for number, raw in enumerate(file, 1):
            if not raw.endswith(b"\n"):
                break  # the partial last line
            try:
                data = json.loads(raw)
                digest = data.get(INPUT_DIGEST)
                records.append((data["id"], Status(data["status"]), digest))
            except (ValueError, KeyError, TypeError):
                raise InvalidInput(
                    f"line {number} is not an assay batch result, so this output cannot be "
                    "resumed (choose another --out, or delete it)",
                    where=str(path),
                ) from None
            keep += len(raw)
    if keep != path.stat().st_size:
        with path.open("r+b") as file:
            file.truncate(keep)
    return records


def run_batch(
    episodes: Path,
    executor: Executor,
    *,
    out: Path | None = None,
    stream: IO[str] | None = None,
    progress: Callable[[Judged], None] | None = None,
    resumed: Callable[[int], None] | None = None,
) -> BatchSummary:
    """Judge every line of ``episodes`` with ``executor``; write the results to ``out``
    (resuming it) or to ``stream``. ``resumed`` hears how many lines the output already
    answered, ``progress`` each new result. InvalidInput for an unusable input or output file;
    AssayError when the output cannot be written."""
    check_paths(episodes, out)
    summary = BatchSummary()
    seen: set[str] = set()
    jobs = read_jobs(episodes, seen)
    sink = stream
    try:
        if out is not None:
            if out.exists():
                _skip_answered(read_output(out), jobs, out, summary)
                if resumed is not None:
                    resumed(summary.resumed)
            sink = out.open("a", encoding="ascii")
        if sink is None:
            raise ValueError("give out or stream")
        start = flushed = time.perf_counter()
        try:
            for judged in executor.map(jobs):
                sink.write(judged.line + "\n")
                if (now := time.perf_counter()) - flushed > FLUSH_EVERY:
                    sink.flush()
                    flushed = now
                summary.counts[judged.status] += 1
                summary.judged += 1
                if progress is not None:
                    progress(judged)
        finally:
            summary.seconds = time.perf_counter() - start
            if sink is not stream:
                sink.close()
            else:
                sink.flush()
    except BrokenPipeError:
        raise AssayError(
            f"the output was closed after {summary.judged} new results; the rest were not written"
        ) from None
    except OSError as exc:
        raise AssayError(f"cannot write the results: {exc.strerror or exc}") from None
    finally:
        jobs.close()
    return summary


def check_paths(episodes: Path, out: Path | None) -> None:
    """InvalidInput unless ``episodes`` is a file and ``out`` can be written (cheap: checked
    before any worker or Ray instance starts)."""
    if not episodes.is_file():
        raise InvalidInput("no such file", where=str(episodes))
    if out is None:
        return
    if out.exists() and out.resolve() == episodes.resolve():
        raise InvalidInput("the output would overwrite the episodes file", where="--out")
    if out.exists() and not out.is_file():
        raise InvalidInput("not a regular file", where=str(out))
    if not out.parent.is_dir():
        raise InvalidInput("its folder does not exist", where=str(out))


def _skip_answered(
    records: list[Record], jobs: Iterator[Job], out: Path, summary: BatchSummary
) -> None:
    """Skip the input lines the output already answers, checking they are the same lines: the
    same id, and the same bytes (``input_sha256``), so a line rewritten since it was judged (a
    new answer under an old id) never keeps the old verdict."""
    for number, (ident, status, digest) in enumerate(records, 1):
        job = next(jobs, None)
        if job is None:
            raise InvalidInput(
                f"holds {len(records)} results, more than the episodes file has items: "
                "it is the output of another input (choose another --out)",
                where=str(out),
            )
        expected = item_id(job.data)
        if ident != expected:
            raise InvalidInput(
                f"result {number} is for id {ident!r}, but the episodes file's {job.where} has "
                f"id {expected!r}: it is the output of another input (choose another --out)",
                where=str(out),
            )
        if digest != job.digest:
            raise InvalidInput(
                f"result {number} ({ident!r}) was judged on other content than the episodes "
                f"file's {job.where} now holds: it is the output of another input (choose "
                "another --out)",
                where=str(out),
            )
        summary.counts[status] += 1
        summary.resumed += 1


def resolve_root(episodes: Path, root: Path | None) -> Path:
    """The workspace root: ``root`` when given, else the episodes file's folder."""
    base = root if root is not None else episodes.parent
    if not base.is_dir():
        raise InvalidInput("not a folder", where=str(root) if root else "--workspace-root")
    return Path(os.path.abspath(base))
