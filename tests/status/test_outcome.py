"""Outcomes are validated however they are built: the fast constructors skip no check."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.status import Outcome, Status

CONSTRUCTORS = [
    (Outcome.verified, Status.VERIFIED),
    (Outcome.refuted, Status.REFUTED),
    (Outcome.inconclusive, Status.INCONCLUSIVE),
    (Outcome.error, Status.ERROR),
]


@pytest.mark.parametrize(("make", "status"), CONSTRUCTORS)
def test_each_constructor_builds_what_the_model_builds(make: Any, status: Status) -> None:
    built = make("why", {"got": 3})
    assert built == Outcome(status=status, detail="why", evidence={"got": 3})
    assert type(built) is Outcome
    assert built.model_fields_set == {"status", "detail", "evidence"}
    stamped = built.with_kind("answer_number")
    assert stamped == Outcome(
        status=status, detail="why", kind="answer_number", evidence={"got": 3}
    )
    assert stamped.model_fields_set == {"status", "detail", "kind", "evidence"}
    assert built.kind is None  # stamping makes a new outcome; the kind's own is unchanged


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Outcome.refuted(42),  # type: ignore[arg-type]
        lambda: Outcome.verified("ok", evidence=["not", "a", "dict"]),  # type: ignore[arg-type]
        lambda: Outcome.error("x", evidence={1: "key is not text"}),  # type: ignore[dict-item]
        lambda: Outcome.inconclusive(None),  # type: ignore[arg-type]
        lambda: Outcome.verified("ok").with_kind(7),  # type: ignore[arg-type]
    ],
)
def test_the_fast_constructors_still_validate(bad: Any) -> None:
    with pytest.raises(ValidationError):
        bad()


def test_outcomes_stay_frozen() -> None:
    outcome = Outcome.verified("ok").with_kind("answer_number")
    with pytest.raises(ValidationError):
        outcome.status = Status.REFUTED  # type: ignore[misc]
