"""A manager of one problem uses an audit's runs query to reach another manager's runs: to
sample them, or to learn about them from whether the query is refused (a problem whose results
are held until a score release tells nobody whether, or when, its runs were verified).

Found: ``Campaigns._runs`` (src/assay/platform/_campaigns.py) read every run the query
matched and refused when one belonged to a problem the user did not manage, naming it. With no
``problem=``, the refusal was an oracle: ``runs:status=verified,since=A,until=B`` failed
exactly when another problem had a verified run finished in [A, B), so bisecting the window
gave each of its runs' finish time and status, held results included.
Fixed: a ``problem=`` the user does not manage is refused before any run is read (the same
refusal whether it has runs or even exists), and without ``problem=`` the candidates are the
runs of the problems the user manages, so another's runs never change the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from tests.adversarial.campaign_attacks import audited, expert, submit
from tests.platform.conftest import Clock
from tests.review.helpers import sqlite_platform


def _two_problems(platform: Platform, tmp_path: Path) -> None:
    audited(platform, tmp_path, problem="mine", manager="boss")
    audited(platform, tmp_path, problem="theirs", manager="other")


def _answer(platform: Platform, query: str) -> tuple[str, list[str]]:
    """What boss learns from a query: its refusal, or the runs it selected."""
    try:
        view = platform.reviews.campaigns.create(expert(), query, "boss")
    except InvalidInput as exc:
        return str(exc), []
    return "", [i.label for i in view.items]


@pytest.mark.parametrize(
    "query",
    [
        "runs:status=verified,since={since},until={until}",
        "runs:status=any",
        "runs:status=refuted",
        "runs:checker=assay:",
    ],
)
def test_another_s_runs_never_change_what_a_query_answers(tmp_path: Path, query: str) -> None:
    clock = Clock()
    with sqlite_platform(tmp_path, clock) as platform:
        _two_problems(platform, tmp_path)
        own = submit(platform, tmp_path, "mine", "alice")
        clock.advance(hours=1)
        since = clock.now.isoformat().replace("+00:00", "Z")
        clock.advance(hours=1)
        until = clock.now.isoformat().replace("+00:00", "Z")
        text = query.format(since=since, until=until)
        before = _answer(platform, text)
        clock.now = clock.now.replace(hour=clock.now.hour - 1, minute=30)  # inside the window
        submit(platform, tmp_path, "theirs", "carol")
        submit(platform, tmp_path, "theirs", "dave", summary="41")
        assert _answer(platform, text) == before
        assert not before[1] or before[1] == [own.run]


@pytest.mark.parametrize("problem", ["theirs", "nowhere"])
def test_naming_another_s_problem_is_refused_the_same_way(tmp_path: Path, problem: str) -> None:
    with sqlite_platform(tmp_path, Clock()) as platform:
        _two_problems(platform, tmp_path)
        refusals = []
        for _ in range(2):
            with pytest.raises(
                InvalidInput, match=f"does not manage problem '{problem}'"
            ) as caught:
                platform.reviews.campaigns.create(expert(), f"runs:problem={problem}", "boss")
            assert caught.value.where == "--as"
            refusals.append(str(caught.value))
            submit(platform, tmp_path, "theirs", "carol")  # runs appear: the refusal is the same
        assert refusals[0] == refusals[1]
