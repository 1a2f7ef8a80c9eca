"""``assay batch --out`` resumes by id alone: a result stands for whatever the line now says.

Resuming skips every input line the output already answers, checking only that the ids match
line by line. The results do not record what they judged, so an episodes file rewritten between
two runs (the next epoch's answers under the same ids, a dataset re-exported with fixed labels,
a file the agent could write) keeps the old verdicts: a ``verified`` earned by one answer is
counted for another. The idempotency store refuses exactly this (a key bound to the item's
fingerprint); the batch output should bind each result to its item the same way (store
``Episode.fingerprint`` in the line, or a digest of the input line, and refuse to resume when it
differs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Config, InvalidInput
from assay.executors import Executor, Job, Judged, in_process, run_batch

CONFIG = Config()
CHECKS = [{"kind": "answer_number", "value": 10}]


class _Here(Executor):
    """Judges in this process: the resume logic is the subject, not the pool."""

    def map(self, jobs: Iterable[Job]) -> Iterator[Judged]:
        return in_process(jobs, None, CONFIG)


def _write(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))


CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "answer changed": (
        {"id": "ep-1", "checks": CHECKS, "answer": "10"},
        {"id": "ep-1", "checks": CHECKS, "answer": "11"},
    ),
    "label changed": (
        {"id": "ep-1", "checks": CHECKS, "answer": "10"},
        {"id": "ep-1", "checks": [{"kind": "answer_number", "value": 12}], "answer": "10"},
    ),
    "mode changed": (
        {
            "id": "ep-1",
            "checks": [*CHECKS, {"kind": "answer_contains", "value": "x"}],
            "answer": "10 x",
            "mode": "all",
        },
        {
            "id": "ep-1",
            "checks": [*CHECKS, {"kind": "answer_contains", "value": "x"}],
            "answer": "10",
            "mode": "weighted",
        },
    ),
}


@pytest.mark.parametrize("case", list(CHANGES))
def test_a_resumed_batch_never_keeps_a_verdict_for_other_work(tmp_path: Path, case: str) -> None:
    first, second = CHANGES[case]
    episodes, out = tmp_path / "episodes.jsonl", tmp_path / "results.jsonl"
    _write(episodes, [first])
    run_batch(episodes, _Here(), out=out)
    assert json.loads(out.read_text())["status"] == "verified"
    _write(episodes, [second, {"id": "ep-2", "checks": CHECKS, "answer": "10"}])
    try:
        summary = run_batch(episodes, _Here(), out=out)
    except InvalidInput as exc:  # refusing to resume another input is a fix too
        refusal = str(exc)
    else:
        refusal = ""
    if refusal:
        assert "another input" in refusal
        return
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    first_line = next(line for line in lines if line["id"] == "ep-1")
    assert summary.resumed == 0 or first_line["status"] != "verified", (
        "the verdict on the old line was kept for the new one"
    )
