"""What judging one episode gives back: the document every interface returns per item."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay._wire import WireModel, unvalidated
from assay.status import Outcome, Report, Status


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


_GIVEN = ("id", "status", "score", "reward", "outcomes")
