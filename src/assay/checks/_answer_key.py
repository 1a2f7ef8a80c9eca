"""The answer key: a reward a reward-hacking policy cannot talk up.

Three hacks are closed here: a self-reported reward (never read), partial coverage (answering the
easy tasks only, or padding with extra ids, is not accepted at all), and loose equality (``True``
for ``1``, ``"1"`` for ``1``, ``1.0`` for ``1``: compared type-strictly at every depth).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ConfigDict, Field

from assay._strict import strict_equal
from assay._wire import WireModel


class AnswerKeyScore(WireModel):
    """The full account behind a reward: the document ``assay.answer_key_score/1``.

    ``assay verify`` prints it (without the id lists unless ``--detail``: see ``to_json``).
    """

    # Without ``--detail`` the id lists are left out, so only ``reward`` and ``accepted`` (and
    # ``schema``) are always there.
    model_config = ConfigDict(json_schema_serialization_defaults_required=False)

    schema_: Literal["assay.answer_key_score/1"] = Field("assay.answer_key_score/1", alias="schema")
    reward: float
    """correct / len(key) when accepted; 0.0 otherwise (and for an empty key)."""
    accepted: bool
    """False unless the outputs cover the key's task ids exactly."""
    correct: tuple[str, ...] = ()
    """Task ids answered with exactly the key's value (type-strict, at every depth)."""
    wrong: tuple[str, ...] = ()
    """Task ids answered with another value."""
    missing: tuple[str, ...] = ()
    """Task ids of the key the outputs do not answer."""
    extra: tuple[str, ...] = ()
    """Task ids in the outputs that the key does not have."""
    problem: str | None = None
    """Why the submission could not be scored at all (malformed), if it could not."""

    def to_json(self, *, detail: bool = True) -> dict[str, Any]:
        """The document; without ``detail``, only ``schema``, ``reward`` and ``accepted``."""
        if detail:
            return super().to_json()
        return self.model_dump(
            mode="json", by_alias=True, include={"schema_", "reward", "accepted"}
        )

    def as_reward(self) -> dict[str, Any]:
        """``{"reward": float, "accepted": bool}``: what ``verify`` returns."""
        return {"reward": self.reward, "accepted": self.accepted}


def _ids(keys: Any) -> tuple[str, ...]:
    return tuple(sorted((str(k) for k in keys), key=str))


def score_answers(submission: Any, answer_key: Mapping[Any, Any]) -> AnswerKeyScore:
    """Score ``submission["outputs"]`` against ``answer_key``; never raises on a bad submission.

    ``submission["reported_reward"]`` is never read: the reward is recomputed from the outputs.
    """
    if not isinstance(submission, Mapping):
        return AnswerKeyScore(
            reward=0.0,
            accepted=False,
            problem=f"the submission is a {type(submission).__name__}, not an object",
        )
    outputs = submission.get("outputs")
    if not isinstance(outputs, Mapping):
        what = "missing" if "outputs" not in submission else f"a {type(outputs).__name__}"
        return AnswerKeyScore(
            reward=0.0, accepted=False, problem=f"'outputs' is {what}, not an object"
        )
    key_ids = {(type(k), k) for k in answer_key}
    out_ids = {(type(k), k) for k in outputs}
    missing = _ids(k for t, k in key_ids - out_ids)
    extra = _ids(k for t, k in out_ids - key_ids)
    if missing or extra:
        return AnswerKeyScore(reward=0.0, accepted=False, missing=missing, extra=extra)
    if not answer_key:
        return AnswerKeyScore(reward=0.0, accepted=True)
    correct: list[Any] = []
    wrong: list[Any] = []
    for task_id, expected in answer_key.items():
        (correct if strict_equal(expected, outputs[task_id]) else wrong).append(task_id)
    return AnswerKeyScore(
        reward=len(correct) / len(answer_key),
        accepted=True,
        correct=_ids(correct),
        wrong=_ids(wrong),
    )


def verify(submission: Any, answer_key: Mapping[Any, Any]) -> dict[str, Any]:
    """``{"reward": float, "accepted": bool}`` for a submission against an answer key.

    Recomputed from ``submission["outputs"]`` alone; accepted only on exact coverage of the key's
    task ids; a task is correct only on a type-strict deep match; an empty key is a vacuous
    accept with reward 0.0; a malformed submission scores 0.0, unaccepted, and never raises.
    """
    return score_answers(submission, answer_key).as_reward()
