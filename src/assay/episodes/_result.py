"""What judging one episode gives back: the document every interface returns per item."""

from __future__ import annotations

import json
import math
from typing import Literal

from pydantic import Field

from assay._wire import WireModel, unvalidated
from assay.status import Outcome, Report, Status, clean_text, clean_value


class EpisodeResult(WireModel):
    """One item's verdict: ``assay.result/1``, a line of ``assay batch``, an entry of
    ``/v1/verify``'s ``results``.

    ``reward`` is what a trainer adds up: the score when a finding decided the item, null when
    nothing did (``inconclusive``, ``error``), so the sample is masked rather than taught 0.0.
    """

    schema_: Literal["assay.result/1"] = Field("assay.result/1", alias="schema")
    id: str
    """The item's id, as the caller sent it."""
    status: Status
    score: float | None
    """The report's score: 1.0/0.0 in mode ``all``, the verified share of weights in ``weighted``."""
    reward: float | None
    """``score`` when the status is verified or refuted; null otherwise (mask the sample)."""
    outcomes: tuple[Outcome, ...]

    @classmethod
    def of(cls, id: str, report: Report) -> EpisodeResult:
        """The result of an item whose checks ran: the report's verdict under the item's id."""
        reward = report.score if report.status.concluded else None
        return cls._made(id, report.status, report.score, reward, report.outcomes)

    @classmethod
    def invalid(cls, id: str, message: str) -> EpisodeResult:
        """An item assay did not judge: ``error`` (never a finding about the work), its one
        outcome saying why (the field that is wrong as sent, or assay's own failure)."""
        return cls._made(id, Status.ERROR, None, None, (Outcome.error(message),))

    @classmethod
    def _made(
        cls,
        id: str,
        status: Status,
        score: float | None,
        reward: float | None,
        outcomes: tuple[Outcome, ...],
    ) -> EpisodeResult:
        """One result per item, thousands a second: built from values assay made and checked
        (a validated report, a status), so not validated again."""
        fields = {
            "schema_": "assay.result/1",
            "id": id,
            "status": status,
            "score": score,
            "reward": reward,
            "outcomes": outcomes,
        }
        return unvalidated(cls, fields, set(_GIVEN))

    def json_text(self) -> str:
        """``to_json()`` as compact JSON text: exactly ``json.dumps(self.to_json(),
        ensure_ascii=False, separators=(",", ":"))`` (a test compares the two on results of
        every status, kind of detail and evidence), written directly for the shapes assay makes,
        because building the dict and encoding it cost more than judging a short answer. A
        value of another shape (a caller's own) takes the ``to_json`` path. It may hold a lone
        surrogate from an id; the caller encodes it (see ``assay.service._encoding``)."""
        score, reward = self.score, self.reward
        outcomes = [_outcome_text(outcome) for outcome in self.outcomes]
        if (
            type(self.id) is not str
            or self.status not in _STATUS
            or not (_plain_number(score) and _plain_number(reward))
            or None in outcomes
        ):
            return _DUMPS(self.to_json())
        score_text = "null" if score is None else float.__repr__(score)
        reward_text = "null" if reward is None else float.__repr__(reward)
        return (
            f'{{"schema":"assay.result/1","id":{_TEXT(self.id)}{_STATUS[self.status]},'
            f'"score":{score_text},"reward":{reward_text},'
            f'"outcomes":[{",".join(outcomes)}]}}'  # type: ignore[arg-type]  # no None: checked
        )


_GIVEN = ("id", "status", "score", "reward", "outcomes")
_STATUS = {status: f',"status":"{status.value}"' for status in Status}
_TEXT = json.encoder.encode_basestring
"""A JSON string as ``json.dumps(..., ensure_ascii=False)`` writes it (the same C function)."""
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _plain_number(value: object) -> bool:
    """None or a finite float: what the hand-written form writes as pydantic does."""
    return value is None or (type(value) is float and math.isfinite(value))


def _outcome_text(outcome: Outcome) -> str | None:
    """One outcome as ``model_dump(mode="json")`` then compact JSON would write it; None for
    anything but an ``Outcome`` holding the types its fields declare."""
    if type(outcome) is not Outcome:
        return None
    kind, detail, evidence = outcome.kind, outcome.detail, outcome.evidence
    if (
        not (kind is None or type(kind) is str)
        or type(detail) is not str
        or outcome.status not in _STATUS
        or not (evidence is None or type(evidence) is dict)
    ):
        return None
    kind_text = "null" if kind is None else _TEXT(kind)
    evidence_text = "null" if evidence is None else _DUMPS(clean_value(evidence))
    return (
        f'{{"kind":{kind_text}{_STATUS[outcome.status]},"detail":{_TEXT(clean_text(detail))},'
        f'"evidence":{evidence_text}}}'
    )
