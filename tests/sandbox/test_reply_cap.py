"""What may cross back from the candidate's process is capped by the run's memory (``_proxy``):
the cap itself, and the decoder's budget on the objects a reply builds in the judge."""

from __future__ import annotations

import pytest

from assay.sandbox import _limits, _proxy


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
