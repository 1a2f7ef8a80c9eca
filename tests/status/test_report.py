from __future__ import annotations

import pytest

from assay import InvalidInput, Mode, Outcome, Status, combine

V = Outcome.verified()
R = Outcome.refuted("wrong")
I = Outcome.inconclusive("limit hit")
E = Outcome.error("machinery")


@pytest.mark.parametrize(
    ("outcomes", "status", "score"),
    [
        ([V], Status.VERIFIED, 1.0),
        ([V, V, V], Status.VERIFIED, 1.0),
        ([V, R], Status.REFUTED, 0.0),
        ([V, R, I], Status.REFUTED, 0.0),
        ([R, E], Status.REFUTED, 0.0),
        ([E, I, R], Status.REFUTED, 0.0),
        ([V, I], Status.INCONCLUSIVE, None),
        ([V, I, E], Status.ERROR, None),
        ([I, E], Status.ERROR, None),
        ([E], Status.ERROR, None),
    ],
)
def test_all_mode(outcomes: list[Outcome], status: Status, score: float | None) -> None:
    report = combine(outcomes)
    assert report.status is status
    assert report.score == score


@pytest.mark.parametrize(
    ("outcomes", "weights", "status", "score"),
    [
        ([V, V], [1, 3], Status.VERIFIED, 1.0),
        ([V, R], [1, 3], Status.REFUTED, 0.25),
        ([R, V, V], [2, 1, 1], Status.REFUTED, 0.5),
        ([V, R, I], [1, 1, 1], Status.REFUTED, 1 / 3),
        ([V, R, E], [1, 2, 1], Status.REFUTED, 0.25),
        ([V, I], [1, 1], Status.INCONCLUSIVE, None),
        ([V, E, I], [1, 1, 1], Status.ERROR, None),
        ([R, R], [1, 1], Status.REFUTED, 0.0),
    ],
)
def test_weighted_mode(
    outcomes: list[Outcome], weights: list[float], status: Status, score: float | None
) -> None:
    report = combine(outcomes, Mode.WEIGHTED, weights)
    assert report.status is status
    assert report.score == score


def test_empty_check_list_is_invalid_not_a_pass() -> None:
    with pytest.raises(InvalidInput, match="empty check list is never a pass"):
        combine([])


def test_weights_must_match_outcomes() -> None:
    with pytest.raises(InvalidInput, match="one weight per outcome"):
        combine([V, R], Mode.WEIGHTED, [1.0])


def test_labels_for_people() -> None:
    assert [s.label for s in Status] == [
        "Verified",
        "Did not satisfy the verifier",
        "Could not determine",
        "Verification error",
    ]
    assert Status.REFUTED.concluded and not Status.ERROR.concluded


def test_wire_form_is_stable() -> None:
    report = combine([Outcome.refuted("x", {"a": 1}).model_copy(update={"kind": "k"})])
    assert report.to_json() == {
        "schema": "assay.report/1",
        "task": None,
        "status": "refuted",
        "score": 0.0,
        "mode": "all",
        "outcomes": [{"kind": "k", "status": "refuted", "detail": "x", "evidence": {"a": 1}}],
    }


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("other", [E, I])
def test_no_error_or_limit_hides_a_refutation(mode: Mode, other: Outcome) -> None:
    """A candidate able to trigger an error or a limit anywhere must not mask a refutation."""
    for outcomes in ([R, other], [other, R], [V, other, R, other]):
        report = combine(outcomes, mode)
        assert report.status is Status.REFUTED
        assert report.score is not None and report.score < 1.0


@pytest.mark.parametrize("mode", list(Mode))
def test_score_is_absent_exactly_when_no_finding_decides_it(mode: Mode) -> None:
    for outcomes in ([V], [R], [V, R], [I], [E], [V, I], [V, E], [I, E], [R, I], [R, E]):
        report = combine(outcomes, mode)
        assert (report.score is None) is (not report.status.concluded), outcomes
