"""The request and response bodies, as models: they document the API (OpenAPI at ``/docs``).

The routes do not validate through them: a body is read as strict JSON and each item is read by
``assay.episodes`` (so one bad item is that item's error, not a failed request), and results are
written from ``EpisodeResult``. These models describe exactly those shapes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.episodes import EpisodeResult


class _Doc(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


class Item(_Doc):
    """One episode to judge: checks (or a task) and what they judge."""

    id: str = Field(min_length=1, max_length=200)
    """Your id for the item; its result carries it."""
    checks: list[dict[str, Any]] | None = None
    """Check specs (see ``assay kinds``); give this or ``task``."""
    task: dict[str, Any] | None = None
    """A task object (``checks``, ``mode``, ``answer``, ``workspace``, ``receipts``)."""
    answer: str | None = None
    """The final answer text (overrides the task's)."""
    workspace: str | None = None
    """A folder relative to the server's workspace root (refused when none is configured)."""
    receipts: list[dict[str, Any]] | None = None
    """Fetches recorded by the retrieval provider: ``{"url", "status"}``."""
    mode: Literal["all", "weighted"] | None = None
    """How outcomes combine (default ``all``)."""
    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    """Sent again with the same item body, the stored result is returned; with another body,
    the item is refused (``error``)."""


class VerifyRequest(_Doc):
    """``POST /v1/verify``."""

    items: list[Item]


class VerifyResponse(_Doc):
    """One result per item, in request order."""

    results: list[EpisodeResult]


class AnswerKeyRequest(_Doc):
    """``POST /v1/answer-key``: what ``assay verify SUBMISSION KEY`` reads from its two files."""

    submission: Any
    """``{"outputs": {task_id: value}, ...}``; a reported reward in it is never read."""
    answer_key: dict[str, Any]
    """``{task_id: value}``."""
    detail: bool = False
    """Also list the correct, wrong, missing and extra task ids (``assay verify --detail``)."""


class RewardRequest(BaseModel):
    """OpenRLHF's ``POST /get_reward`` (other keys a fork adds are ignored)."""

    query: list[str]
    """Prompt plus response, per sample."""
    prompts: list[str]
    labels: list[str]
    """Per sample, the label the serve-time template turns into checks."""


class RewardResponse(BaseModel):
    """What OpenRLHF reads: floats only (a masked reward is 0.0 with ``extra_logs.masked`` 1)."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]
    """``verified``, ``refuted``, ``inconclusive``, ``error``, ``masked``: 1.0 or 0.0 per sample."""


class Health(BaseModel):
    """``GET /healthz``."""

    status: Literal["ok"]
    version: str
    sandbox: dict[str, int]
    """The sandbox queue: ``jobs``, ``bound``, ``pending``, ``started``, ``finished``,
    ``cancelled`` (never started: the client went away)."""
    slow: dict[str, int]
    """The queue of slow answer-only items (``answer_math``, ``sql_query``): the same counters."""
    idempotency_keys: int


REQUESTS: dict[str, type[BaseModel]] = {
    "/v1/verify": VerifyRequest,
    "/v1/answer-key": AnswerKeyRequest,
    "/get_reward": RewardRequest,
}
"""The request body model of each route, put into the OpenAPI document."""
