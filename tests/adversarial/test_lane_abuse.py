"""Files that attack the interaction lane: hang it, flood it, crash it, or make it answer about
another file (issue 15 item 5, issue 17 item 5). Real Agda in bubblewrap; every wait is bounded.

- a file that loops the type checker: killed at the lane's deadline, and the next question gets a
  fresh lane that answers;
- a goal that normalises to megabytes: over ``max_reply_bytes`` it is a LaneError, and under it
  the reply is read in linear time (the old buffer grew by concatenation: 64 MiB took 37 s);
- a lane that dies between questions: the next question starts a new one;
- another file: a file importing the module of a file loaded before finds nothing (the lane's
  folder is emptied per file), a failed load is never answered from the file before it, two
  files under one module name are told apart by content, and a header naming a path outside the
  lane is refused before anything is written.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assay.proofs import AgdaLane, LaneError
from assay.sandbox._reading import kill_tree
from tests.proofs.conftest import need

SYM = (
    "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
    "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' p = {! !}\n"
)
LOOP = (
    "module Loop where\nopen import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality\n"
    "{-# TERMINATING #-}\nloop : Nat → Nat\nloop n = loop n\n"
    "x : loop 0 ≡ 0\nx = refl\ny : Nat\ny = {! !}\n"
)


def _big(doublings: int) -> str:
    """A hole whose goal normalises to a string of 16 * 2**doublings characters (twice)."""
    body = '"' + "a" * 16 + '"'
    for _ in range(doublings):
        body = f"d ({body})"
    return (
        "module Big where\nopen import Agda.Builtin.String\nopen import Agda.Builtin.Equality\n"
        f"d : String → String\nd s = primStringAppend s s\nbig : String\nbig = {body}\n"
        "goal : big ≡ big\ngoal = {! !}\n"
    )


@pytest.fixture
def files(tmp_path: Path) -> Path:
    need("agda")
    (tmp_path / "Sym.agda").write_text(SYM)
    (tmp_path / "Loop.agda").write_text(LOOP)
    return tmp_path


@pytest.mark.slow
def test_a_looping_file_is_killed_at_the_deadline_and_the_lane_recovers(files: Path) -> None:
    with AgdaLane(stdlib=False, timeout=6) as lane:
        start = time.monotonic()
        with pytest.raises(LaneError, match="did not answer within 6s"):
            lane.goal(files / "Loop.agda", 10, 5)
        assert time.monotonic() - start < 30
        assert lane._process is None  # killed, not left running
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"


@pytest.mark.slow
@pytest.mark.parametrize("doublings", [16, 18])
def test_a_flood_is_cut_at_the_reply_cap(doublings: int, files: Path) -> None:
    (files / "Big.agda").write_text(_big(doublings))
    with AgdaLane(stdlib=False, timeout=120, max_reply_bytes=256 * 1024) as lane:
        with pytest.raises(LaneError, match="larger than 262144 bytes"):
            lane.goal(files / "Big.agda", 9, 8)
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"


@pytest.mark.slow
def test_a_large_reply_under_the_cap_is_read_in_linear_time(files: Path) -> None:
    """8 MiB of goal (2 x 4 MiB strings) under the default 16 MiB cap: read in seconds."""
    (files / "Big.agda").write_text(_big(18))
    with AgdaLane(stdlib=False, timeout=120) as lane:
        start = time.monotonic()
        goal = lane.goal(files / "Big.agda", 9, 8)
        elapsed = time.monotonic() - start
    assert len(goal.type) > 8 * 1024 * 1024
    assert elapsed < 60, elapsed


def test_a_lane_that_died_is_replaced(files: Path) -> None:
    with AgdaLane(stdlib=False, timeout=60) as lane:
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"
        assert lane._process is not None
        kill_tree(lane._process)
        lane._process.wait()
        assert lane.infer(files / "Sym.agda", 6, 10, "p") == "x ≡ y"  # a fresh lane answered
        assert lane.restarts == 1


def test_a_file_cannot_import_the_file_loaded_before_it(files: Path) -> None:
    (files / "Secret.agda").write_text(
        "module Secret where\nopen import Agda.Builtin.Nat\nsecret : Nat\nsecret = 42\n"
        "h : Nat\nh = {! !}\n"
    )
    (files / "Peek.agda").write_text(
        "module Peek where\nopen import Agda.Builtin.Nat\nimport Secret\np : Nat\np = {! !}\n"
    )
    with AgdaLane(stdlib=False, timeout=60) as lane:
        assert lane.goal(files / "Secret.agda", 6, 5).type == "Nat"
        with pytest.raises(LaneError, match="Failed to find source of module Secret"):
            lane.goal(files / "Peek.agda", 5, 5)


def test_a_failed_load_is_never_answered_from_the_file_before(files: Path) -> None:
    (files / "Broken.agda").write_text(
        "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
        "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' p = {! !}\nbad : Set\nbad = Set\n"
    )
    with AgdaLane(stdlib=False, timeout=60) as lane:
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"
        for _ in range(2):
            with pytest.raises(LaneError, match="does not load"):
                lane.goal(files / "Broken.agda", 6, 10)
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"


def test_one_module_name_two_contents_are_told_apart(files: Path) -> None:
    (files / "Other.agda").write_text(SYM.replace("y ≡ x\nsym' p", "x ≡ x\nsym' p"))
    with AgdaLane(stdlib=False, timeout=60) as lane:
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"
        assert lane.goal(files / "Other.agda", 6, 10).type == "x ≡ x"
        assert lane.goal(files / "Sym.agda", 6, 10).type == "y ≡ x"


@pytest.mark.parametrize(
    "header", ["module {outside}/X where", "module ../X where", "module A.-B where"]
)
def test_a_header_naming_a_path_outside_is_refused(header: str, files: Path) -> None:
    outside = files / "outside"
    outside.mkdir()
    (files / "Evil.agda").write_text(header.format(outside=outside) + "\nx : Set\nx = {! !}\n")
    with AgdaLane(stdlib=False, timeout=60) as lane, pytest.raises(LaneError):
        lane.goal(files / "Evil.agda", 3, 5)
    assert list(outside.iterdir()) == []


def test_special_files_are_refused_at_once(files: Path) -> None:
    fifo = files / "Fifo.agda"
    os.mkfifo(fifo)
    with AgdaLane(stdlib=False, timeout=60) as lane:
        for path in (fifo, Path("/dev/zero"), files):
            start = time.monotonic()
            with pytest.raises(LaneError, match="not a regular file"):
                lane.goal(path, 1, 1)
            assert time.monotonic() - start < 5
