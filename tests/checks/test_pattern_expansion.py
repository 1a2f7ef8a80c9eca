"""Counted repeats are bounded before a pattern is compiled (regex unrolls them at compile time)."""

from __future__ import annotations

import pytest

from assay import InvalidSpec, build_check
from assay.checks._patterns import MAX_EXPANSION, expansion


@pytest.mark.parametrize(
    "pattern",
    [r"\d{3}-\d{4}", r"[a-z{}]{5,10}", r"\p{L}{2}", r"(\w+\s*){1,20}", r"a{x}", r"\{5\}", "a{500}"],
)
def test_ordinary_patterns_are_far_below_the_bound(pattern: str) -> None:
    assert expansion(pattern) < 1_000
    build_check({"kind": "answer_regex", "pattern": pattern})


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:(?:a{1000}){1000}){1000}",
        "x(?:a{1000}){5000}",
        "a{20001}",
        "((a{200}){200})",
        "(?:a{200}|b){200}",
        "[ab]{30000}",
        "a{1,30000}",
        "a{30000,}",
    ],
)
def test_patterns_that_unroll_past_the_bound_are_refused_before_compiling(pattern: str) -> None:
    assert expansion(pattern) > MAX_EXPANSION
    with pytest.raises(InvalidSpec, match="unroll"):
        build_check({"kind": "answer_regex", "pattern": pattern})
