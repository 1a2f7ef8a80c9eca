"""What may cross back from the candidate's process is capped by the run's memory (``_proxy``):
the cap itself, and the decoder's budget on the objects a reply builds in the judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import CheckContext, build_check
from assay.sandbox import Sandbox, _limits, _proxy
from tests.adversarial.code_checks import workspace
from tests.helpers import R, V


@pytest.mark.parametrize(
    ("memory_mb", "cap"),
    [(1, 64 << 10), (128, 8 << 20), (1024, 64 << 20), (4096, 64 << 20)],
)
def test_the_reply_cap_is_a_sixteenth_of_the_memory(memory_mb: int, cap: int) -> None:
    assert _limits.reply_cap(memory_mb) == cap


def test_the_judge_and_the_verifier_agree_on_the_largest_reply() -> None:
    assert _proxy.MAX_REPLY == _limits.MAX_REPLY


def _frozensets(count: int) -> bytes:
    return b"l" + count.to_bytes(4, "big") + (b"z" + bytes(4)) * count


def test_a_small_reply_of_many_objects_is_refused_before_they_are_built() -> None:
    """1.5 million empty frozensets in 7.5 MB would take ~380 MB in the judge."""
    with pytest.raises(_proxy.Oversized):
        _proxy.decode(_frozensets(1_500_000), budget=[32 << 20])


def test_the_budget_admits_what_fits() -> None:
    value = _proxy.decode(_frozensets(1000), budget=[32 << 20])
    assert value == [frozenset()] * 1000


@pytest.mark.parametrize(
    "data",
    [
        b"s" + (4 << 20).to_bytes(4, "big") + b"x" * (4 << 20),  # 4 MiB of text: ~8 MiB here
        b"i" + (4 << 20).to_bytes(4, "big") + b"\x01" * (4 << 20),
    ],
    ids=["text", "int"],
)
def test_a_large_leaf_is_charged(data: bytes) -> None:
    with pytest.raises(_proxy.Oversized):
        _proxy.decode(data, budget=[4 << 20])
    assert _proxy.decode(data, budget=[16 << 20]) is not None


def test_a_value_nested_too_deeply_is_named() -> None:
    deep = b"l\x00\x00\x00\x01" * (_proxy.MAX_DEPTH + 2) + b"N"
    with pytest.raises(_proxy.TooDeep):
        _proxy.decode(deep)


def _shared(levels: int) -> bytes:
    """``v = [41]``, then ``v = [v, v]`` ``levels`` times, as the candidate's side sends it: the
    second ``v`` of each level is a back-reference to the list seen just before."""
    data = b"l" + (1).to_bytes(4, "big") + b"i" + (1).to_bytes(4, "big") + b"\x29"
    for level in range(levels):
        ref = b"r" + (1).to_bytes(4, "big") + level.to_bytes(1, "big")
        data = b"l" + (2).to_bytes(4, "big") + data + ref
    return data


def test_a_back_reference_is_charged_what_it_names() -> None:
    """A few hundred bytes whose unshared form (and text) has 2**64 leaves: refused."""
    data = _shared(64)
    assert len(data) < 1000
    with pytest.raises(_proxy.Oversized):
        _proxy.decode(data, budget=[32 << 20])


def test_a_shared_value_is_charged_as_its_unshared_form() -> None:
    """Sharing changes neither what is admitted nor its charge; shared rows still arrive shared."""
    value = _proxy.decode(_shared(6), budget=[32 << 20])
    assert isinstance(value, list) and value[0] is value[1]
    row = b"l" + (2).to_bytes(4, "big") + b"N" + b"N"
    ref = b"r" + (1).to_bytes(4, "big") + b"\x00"  # the first list seen: ``row``
    unshared, shared = [32 << 20], [32 << 20]
    _proxy.decode(b"l" + (2).to_bytes(4, "big") + row + row, budget=unshared)
    twice = _proxy.decode(b"l" + (2).to_bytes(4, "big") + row + ref, budget=shared)
    assert isinstance(twice, list) and twice[0] is twice[1] and twice == [[None, None]] * 2
    assert shared[0] == unshared[0] < 32 << 20


# A check that itself holds more than half the run's memory (72 MiB of its own under 128:
# the judge refuses replies past 64 MiB) still gets its small answers, and still judges them.
HEAVY_CHECK = "data = b'x' * (72 << 20)\nfrom solution import answer\nassert answer() == 42"


@pytest.mark.parametrize(("answer", "status"), [(42, V), (41, R)])
def test_a_check_holding_much_of_the_memory_still_gets_small_answers(
    answer: int, status: object, tmp_path: Path
) -> None:
    ws = workspace(tmp_path, {"solution.py": f"def answer():\n    return {answer}\n"})
    spec = {"kind": "python", "code": HEAVY_CHECK, "memory_mb": 128, "timeout": 15}
    outcome = build_check(spec).run(CheckContext(workspace=ws, sandbox=Sandbox(backend="bwrap")))
    assert outcome.status is status, outcome.detail
