"""Shared by the adversarial tests of the platform: a platform over a fresh store on a hand-moved
clock, and the small problem folders the attacks need (built with tests/platform's helpers)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Config
from assay.ledger import Ledger
from assay.platform import Platform
from tests.platform.conftest import Clock, artifact, make_problem

__all__ = ["FINDING", "Clock", "artifact", "make_problem", "opened", "store"]

FINDING = (AssertionError, pytest.fail.Exception)
"""What an xfail-marked finding raises while it stands: its assertion, or pytest.raises' "DID
NOT RAISE". Anything else (a changed API, a refused folder) fails the test instead of passing
as an expected failure."""

SEALED_UNTIL = "2031-01-01T00:00:00Z"
"""After every test clock (which starts in 2030), so sealed references stay sealed."""


def store(db_url: str, tmp_path: Path) -> Config:
    """A fresh store (SQLite or PostgreSQL) with its blobs in the test's folder."""
    return Config(db=db_url, blobs=str(tmp_path / "blobs"))


@contextlib.contextmanager
def opened(config: Config, clock: Clock) -> Iterator[Platform]:
    """A platform over ``config`` on ``clock`` (a second one over the same store is another
    process's view)."""
    with Platform(Ledger.open(config), config, clock=clock) as platform:
        yield platform


def answer_contract(value: str = "42", **extra: Any) -> dict[str, Any]:
    """A contract judged on the summary alone (no sandbox)."""
    return {
        "acceptance": f"The answer is {value}.",
        "stages": [
            {
                "name": "answer",
                "type": "sandbox",
                "checks": [{"kind": "answer_equals", "value": value}],
            }
        ],
        **extra,
    }
