"""How ``assay batch`` frames its input lines: a byte-order mark, CRLF, an id seen before a resume.

A UTF-8 byte-order mark is what Windows tools (PowerShell's ``Out-File``, Excel's "CSV UTF-8",
Notepad before 2019) put at the start of a text file. JSON's RFC 8259 lets a parser ignore it,
and every other line of such a file is judged; but assay reads line 1 with the BOM as part of
the JSON, so the first item is an ``error`` under the id ``""`` ("Unexpected UTF-8 BOM"): that
sample is masked, and a caller joining results to samples by id cannot even find it.

Fix (src/assay/executors/_batch.py ``_job``/``read_jobs``): on line 1 only, drop a leading
``b"\\xef\\xbb\\xbf"`` before decoding (and before the digest, so a resume of a file that gained
or lost its BOM is still refused by ``input_sha256`` only when the item changed).

The other cases pass and stay as regressions: CRLF line ends are judged; an id used again by a
line appended after a run is refused on resume as it is in one run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay._config import Config
from assay.executors import Executor, Job, Judged, in_process, run_batch

CONFIG = Config()


class _Here(Executor):
    """Judges in this process (the executors share ``judge_job``; the framing is run_batch's)."""

    def map(self, jobs: Iterable[Job]) -> Iterator[Judged]:
        return in_process(jobs, None, CONFIG)


def _line(id: str, answer: str) -> bytes:
    item = {"id": id, "checks": [{"kind": "answer_number", "value": 42}], "answer": answer}
    return json.dumps(item).encode()


def _results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


FRAMINGS = {
    "bom-lf": b"\xef\xbb\xbf" + _line("a", "42") + b"\n" + _line("b", "42") + b"\n",
    "bom-crlf": b"\xef\xbb\xbf" + _line("a", "42") + b"\r\n" + _line("b", "42") + b"\r\n",
    "bom-alone-line": b"\xef\xbb\xbf\n" + _line("a", "42") + b"\n" + _line("b", "42") + b"\n",
    "crlf": _line("a", "42") + b"\r\n" + _line("b", "42") + b"\r\n",
    "no-final-newline": _line("a", "42") + b"\n" + _line("b", "42"),
}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_every_item_line_is_judged_under_its_id(tmp_path: Path, framing: str) -> None:
    episodes, out = tmp_path / "episodes.jsonl", tmp_path / "out.jsonl"
    episodes.write_bytes(FRAMINGS[framing])
    run_batch(episodes, _Here(), out=out)
    results = _results(out)
    assert [(r["id"], r["status"]) for r in results] == [("a", "verified"), ("b", "verified")]


def test_an_id_reused_by_a_line_appended_after_a_run_is_refused_on_resume(tmp_path: Path) -> None:
    episodes, out = tmp_path / "episodes.jsonl", tmp_path / "out.jsonl"
    episodes.write_bytes(_line("a", "41") + b"\n")
    run_batch(episodes, _Here(), out=out)
    episodes.write_bytes(_line("a", "41") + b"\n" + _line("a", "42") + b"\n")
    run_batch(episodes, _Here(), out=out)
    results = _results(out)
    assert [r["status"] for r in results] == ["refuted", "error"]
    assert "earlier line" in results[1]["outcomes"][0]["detail"]
