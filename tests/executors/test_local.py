"""The local pool: input order, the same bytes as judging in-process, recycling, hung and dead
workers replaced. Real worker processes (forkserver), real sandboxed checks where marked."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import Config, Status
from assay.executors import Job, LocalExecutor, in_process
from tests.executors.items import answer_item, jobs, sleeper

CONFIG = Config()


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalExecutor]:
    """Two warm workers shared by the module's tests (starting a pool costs seconds here)."""
    with LocalExecutor(root=None, config=CONFIG, jobs=2, chunk_size=3) as executor:
        yield executor


def _lines(judged: Iterator[object]) -> list[str]:
    return [j.line for j in judged]  # type: ignore[attr-defined]


def test_results_come_in_input_order_with_the_bytes_of_judging_in_process(
    pool: LocalExecutor,
) -> None:
    work = jobs(300)
    expected = _lines(in_process(work, None, CONFIG))
    assert _lines(pool.map(work)) == expected
    results = [json.loads(line) for line in expected]
    assert [r["id"] for r in results][:5] == ["e0", "e1", "e2", "e3", "e4"]
    assert (
        results[5]["status"] == "error"
        and "line 6.checks[0]" in results[5]["outcomes"][0]["detail"]
    )
    assert results[11] == {
        "schema": "assay.result/1",
        "id": "",
        "status": "error",
        "score": None,
        "reward": None,
        "outcomes": [
            {
                "kind": None,
                "status": "error",
                "detail": "line 12: not valid JSON: Expecting value",
                "evidence": None,
            }
        ],
    }
    assert {r["status"] for r in results} == {"verified", "refuted", "error"}


def test_one_and_two_workers_write_identical_results(pool: LocalExecutor) -> None:
    work = jobs(200)
    with LocalExecutor(root=None, config=CONFIG, jobs=1) as single:
        one = _lines(single.map(work))
    assert one == _lines(pool.map(work))


def test_an_empty_map_and_a_map_left_early_leave_the_pool_usable(pool: LocalExecutor) -> None:
    assert list(pool.map([])) == []
    work = jobs(120)
    partial = pool.map(work)
    first = [next(partial).id for _ in range(4)]
    partial.close()  # the consumer stops: chunks still out must not answer the next map
    assert first == ["e0", "e1", "e2", "e3"]
    assert _lines(pool.map(work[50:60])) == _lines(in_process(work[50:60], None, CONFIG))


def test_workers_are_recycled_after_max_tasks() -> None:
    work = [Job(answer_item(i), f"line {i + 1}") for i in range(60)]
    with LocalExecutor(root=None, config=CONFIG, jobs=1, max_tasks=10, chunk_size=5) as executor:
        got = _lines(executor.map(work))
        assert executor.recycled >= 4
        assert executor.started == executor.recycled + 1
        assert executor.replaced == 0
    assert got == _lines(in_process(work, None, CONFIG))


def test_a_zero_jobs_pool_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LocalExecutor(root=None, config=CONFIG, jobs=0)


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_hung_item_is_an_error_and_its_worker_is_replaced() -> None:
    """A python check sleeping past the budget: its worker is killed (with its sandbox), the item
    answers error, the items around it are judged, and the pool goes on with a new worker."""
    work = [Job(answer_item(i), f"line {i + 1}") for i in range(8)]
    work[3] = Job(sleeper("hung", 60), "line 4")
    with LocalExecutor(root=None, config=CONFIG, jobs=2, timeout=3, chunk_size=2) as executor:
        start = time.monotonic()
        results = [j.result for j in executor.map(work)]
        elapsed = time.monotonic() - start
        assert executor.replaced == 1
        again = [j.id for j in executor.map(work[:2])]
    assert elapsed < 40, "the hung item held the batch for its whole sleep"
    hung = results[3]
    assert (hung.id, hung.status, hung.reward) == ("hung", Status.ERROR, None)
    assert hung.outcomes[0].detail == (
        "line 4: the worker did not answer within 3 s (killed and replaced)"
    )
    expected = [j.result for j in in_process(work[:3] + work[4:], None, CONFIG)]
    assert results[:3] + results[4:] == expected
    assert again == ["e0", "e1"]


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_worker_that_dies_costs_one_item_never_the_batch() -> None:
    """Killed from outside (as the kernel's OOM killer would): the item it held is an error
    naming the death, every other item is judged, the batch ends."""
    work = [Job(sleeper(f"s{i}", 0.5), f"line {i + 1}") for i in range(6)]
    with LocalExecutor(root=None, config=CONFIG, jobs=2, chunk_size=1) as executor:
        stream = executor.map(work)
        first = next(stream)
        victim = executor.workers[0]
        deadline = time.monotonic() + 30
        while victim.current() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert victim.process.pid is not None
        os.kill(victim.process.pid, signal.SIGKILL)
        results = [first.result] + [j.result for j in stream]
        assert executor.replaced == 1
    assert [r.id for r in results] == [f"s{i}" for i in range(6)]
    errors = [r for r in results if r.status is Status.ERROR]
    assert len(errors) == 1
    assert "the worker died (killed by signal 9) while judging this item" in (
        errors[0].outcomes[0].detail
    )
    assert sum(r.status is Status.VERIFIED for r in results) == 5


def test_a_workspace_resolves_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.txt").write_text("42\n")
    check = {"kind": "file_contains", "path": "out.txt", "value": "42"}
    work = [
        Job({"id": "in", "checks": [check], "workspace": "ws"}, "line 1"),
        Job({"id": "out", "checks": [check], "workspace": "../ws"}, "line 2"),
    ]
    with LocalExecutor(root=tmp_path, config=CONFIG, jobs=1) as executor:
        results = [j.result for j in executor.map(work)]
    assert results[0].status is Status.VERIFIED, results[0]
    assert results[1].status is Status.ERROR
    assert "line 2.workspace" in results[1].outcomes[0].detail
