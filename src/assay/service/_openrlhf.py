"""OpenRLHF's remote reward protocol (``--reward.remote_url http://HOST:PORT/get_reward``).

OpenRLHF posts ``{"query": [str], "prompts": [str], "labels": [str]}``: each query is the prompt
followed by the model's response. It reads ``rewards`` (and ``scores``, for dynamic filtering)
into float tensors, and concatenates each key of ``extra_logs`` across batches as a tensor of
one number per sample, which it logs. So every value here is a number, and there is no null.

A reward assay cannot give (the item is ``inconclusive`` or ``error``) is sent as 0.0, since
OpenRLHF has no way to take a missing one, and flagged: ``extra_logs.masked`` is 1.0 for that
sample, and exactly one of ``extra_logs.verified``, ``refuted``, ``inconclusive``, ``error`` is
1.0 per sample, so a run's logs show how many rewards were masked and why. A trainer that can
filter should drop samples with ``masked == 1``. A query that does not start with its prompt
has no response assay can find: that sample is ``error`` (masked), never judged on a guess.

The response is the query minus the prompt, exactly (no stripping): the template decides how it
is read (``answer_*`` checks find the final answer in it).
"""

from __future__ import annotations

from typing import Any

from assay.service._limits import bounded_list, object_with
from assay.service._problems import ApiError

STATUSES = ("verified", "refuted", "inconclusive", "error")
NOT_PREFIXED = "the query does not start with its prompt, so no response can be taken from it"


def samples(data: Any, limit: int) -> tuple[list[str], list[str], list[Any]]:
    """The request's queries, prompts and labels, checked: 422 naming the field otherwise."""
    body = object_with(data, ("query", "prompts", "labels"), None)  # forks add keys: ignored
    columns: list[list[Any]] = []
    for name in ("query", "prompts", "labels"):
        column = bounded_list(body[name], name, limit)
        for index, value in enumerate(column):
            if not isinstance(value, str) and not (name == "labels" and isinstance(value, dict)):
                what = "text" if name != "labels" else "text (or a JSON task object)"
                raise ApiError(
                    422, f"must be {what}, not {type(value).__name__}", where=f"{name}[{index}]"
                )
        columns.append(column)
    queries, prompts, labels = columns
    if not len(queries) == len(prompts) == len(labels):
        raise ApiError(
            422,
            f"query, prompts and labels must be as long as each other "
            f"({len(queries)}, {len(prompts)}, {len(labels)})",
            where="labels",
        )
    return queries, prompts, labels


def response_of(query: str, prompt: str) -> str | None:
    """The model's response: ``query`` without its ``prompt`` prefix; None when it lacks it."""
    return query[len(prompt) :] if query.startswith(prompt) else None


def reply(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``/get_reward`` body for per-sample results (``EpisodeResult`` JSON)."""
    rewards = [float(r["reward"]) if r.get("reward") is not None else 0.0 for r in results]
    logs: dict[str, list[float]] = {
        status: [1.0 if r["status"] == status else 0.0 for r in results] for status in STATUSES
    }
    logs["masked"] = [0.0 if r.get("reward") is not None else 1.0 for r in results]
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": logs}
