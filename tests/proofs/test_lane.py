"""The interaction lane answers questions in milliseconds and has no way to say 'proved'."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.proofs import AgdaLane, Goal, LaneError
from tests.proofs.conftest import need

SOURCE = (
    "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
    "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' p = {! !}\n"
)


def test_goal_context_and_inference(tmp_path: Path) -> None:
    need("agda")
    file = tmp_path / "Sym.agda"
    file.write_text(SOURCE)
    with AgdaLane(stdlib=False) as lane:
        goal = lane.goal(file, 6, 10)
        assert goal.type == "y ≡ x"
        assert ("p", "x ≡ y") in [(e.name, e.type) for e in goal.context]
        assert lane.infer(file, 6, 10, "p") == "x ≡ y"
        with pytest.raises(LaneError, match="no hole opens at line 6, column 11"):
            lane.goal(file, 6, 11)
    assert file.read_text() == SOURCE


def test_answers_carry_no_status() -> None:
    assert set(Goal.model_fields) == {"schema_", "type", "context", "inferred"}
    assert "status" not in Goal(type="T", context=()).to_json()


def test_the_lane_is_recycled(tmp_path: Path) -> None:
    need("agda")
    file = tmp_path / "Sym.agda"
    file.write_text(SOURCE)
    with AgdaLane(stdlib=False, max_uses=2) as lane:
        for _ in range(5):
            assert lane.goal(file, 6, 10).type == "y ≡ x"
        assert lane.restarts >= 1
