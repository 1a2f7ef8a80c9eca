"""A manager tries to make a campaign's sample depend on something other than its candidates,
N and seed: the seed spelled another way over HTTP (``"007"``, ``7.0``, ``true``), the folder
listed in another order, candidates repeated, or a sample larger than the candidates.

Regression guards (the system held): the seed is a whole number or refused naming ``seed``;
``7``, ``"7"`` and ``"007"`` are one seed; the candidates are sorted before sampling, so the
same set gives the same sample however it is listed; ``N`` above the candidates keeps them
all; the sample is the same on every call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.platform._campaigns import sample
from assay.web._campaigns import _BadField, _whole
from tests.platform.conftest import Clock
from tests.review.helpers import escalation, sqlite_platform
from tests.review16.helpers import parsed


@pytest.mark.parametrize("spelled", [7, "7", "007", " 7 "])
def test_one_seed_however_it_is_spelled(spelled: Any) -> None:
    assert _whole(spelled, "seed") == 7


@pytest.mark.parametrize(
    "spelled", [True, False, 7.0, "7.0", "7e0", "0x7", "+7", "٧", [7], {"s": 7}]
)
def test_a_seed_that_is_not_a_whole_number_is_refused(spelled: Any) -> None:
    with pytest.raises(_BadField, match=r"^seed: give a whole number"):
        _whole(spelled, "seed")


def test_the_same_candidates_give_the_same_sample_however_listed(tmp_path: Path) -> None:
    names = [f"c{i:03}.md" for i in range(40)]
    assert sample(sorted(names), 5, 3) == sample(sorted(names), 5, 3)  # a pure function
    assert sample(sorted(names), 500, 3) == sorted(names)
    with sqlite_platform(tmp_path, Clock()) as platform:
        labels = []
        for order in (names, list(reversed(names))):
            folder = tmp_path / f"items{len(labels)}"
            folder.mkdir()
            for name in order:  # written (and so listed by the file system) in another order
                (folder / name).write_text(name)
            view = platform.reviews.campaigns.create(
                parsed(escalation()), str(folder), "boss", 5, 3
            )
            labels.append([i.label for i in view.items])
        assert labels[0] == labels[1] == sample(sorted(names), 5, 3)
