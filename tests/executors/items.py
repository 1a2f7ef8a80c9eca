"""Items for executor tests: answer checks of every status, and lines that cannot be items."""

from __future__ import annotations

from typing import Any

from assay.executors import Job


def answer_item(i: int) -> dict[str, Any]:
    """An answer item; every third is wrong, every seventh is an answer_equals."""
    if i % 7 == 0:
        return {
            "id": f"e{i}",
            "checks": [{"kind": "answer_equals", "value": "yes"}],
            "answer": "yes",
        }
    given = i + 1 if i % 3 == 0 else i
    return {"id": f"e{i}", "checks": [{"kind": "answer_number", "value": i}], "answer": f"{given}"}


def jobs(n: int) -> list[Job]:
    """``n`` jobs named ``line N``: answers, plus an invalid item and a refused line."""
    found = [Job(answer_item(i), f"line {i + 1}") for i in range(n)]
    if n > 12:
        found[5] = Job({"id": "bad", "checks": [{"kind": "no_such_kind"}]}, "line 6")
        found[11] = Job(None, "line 12", "not valid JSON: Expecting value")
    return found


def sleeper(ident: str, seconds: float) -> dict[str, Any]:
    """A sandboxed python check that sleeps (its own timeout well above the sleep)."""
    code = f"import time\ntime.sleep({seconds})"
    return {"id": ident, "checks": [{"kind": "python", "code": code, "timeout": 120}]}
