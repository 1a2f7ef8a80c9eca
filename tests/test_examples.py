"""Every bundled example runs, and says what its description promises."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay import Status, all_kinds, check_task, load_task

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PASSING = sorted(EXAMPLES.glob("*.json"))
HACKS = sorted((EXAMPLES / "hacks").glob("*.json"))


@pytest.mark.parametrize("path", PASSING, ids=lambda p: p.stem)
def test_examples_are_verified(path: Path) -> None:
    if path.stem == "lean" and shutil.which("lake") is None:
        report = check_task(path)
        assert report.status is Status.INCONCLUSIVE
        assert "lake is not installed" in report.outcomes[0].detail
        pytest.skip(
            "Lean cannot be installed on these machines: the lean example is inconclusive here"
        )
    report = check_task(path)
    assert report.status is Status.VERIFIED, [o.detail for o in report.outcomes]


@pytest.mark.parametrize("path", HACKS, ids=lambda p: p.stem)
def test_hack_examples_are_refuted(path: Path) -> None:
    report = check_task(path)
    assert report.status is Status.REFUTED, [o.detail for o in report.outcomes]


def test_every_kind_has_an_example_named_after_it() -> None:
    for kind in all_kinds():
        path = EXAMPLES / f"{kind.name}.json"
        assert path.exists(), f"no example for {kind.name}"
        assert {c.kind.name for c in load_task(path).checks} == {kind.name}
