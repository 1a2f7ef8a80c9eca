"""The verifiers adapter, called exactly as a ``vf.Rubric`` calls a reward function.

verifiers is not installed here; ``_rubric_call`` copies ``Rubric._call_individual_reward_func``
and ``_is_group_func`` from ``verifiers/legacy/rubrics/rubric.py`` of PrimeIntellect-ai/verifiers
at commit a60a606e (2026-08-21, version 0.4.0; ``import verifiers as vf; vf.Rubric`` is this
class): lines 106-123 (a parameter named ``completions``, ``answers``, ``infos``... or a ``list``
return makes a group function), 125-141 (the score objects: ``prompt``, ``completion``,
``answer``, ``state``, ``info``, ``parser``, ``task``), 184-218 (all of them when the function
takes ``**kwargs``, else only the named ones; ``float(await maybe_await(...))``; an exception
is logged and scores 0.0). Messages may be pydantic objects (``verifiers/legacy/types.py``
166-172: ``AssistantMessage`` with ``content`` text, a list of parts, or None).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass
from typing import Any, get_origin

from assay.integrations import verifiers
from assay.integrations.verifiers import make_reward

NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}
GROUP_NAMES = {"states", "prompts", "completions", "answers", "tasks", "infos"}


def _is_group_func(func: Any) -> bool:
    sig = inspect.signature(func)
    annotation = sig.return_annotation
    return bool(set(sig.parameters) & GROUP_NAMES) or (
        annotation is list or get_origin(annotation) is list
    )


def _rubric_call(func: Any, completion: Any, answer: Any, info: Any = None) -> float:
    """``Rubric._call_individual_reward_func`` over a state holding this rollout."""
    state = {"prompt": "What is 2+2?", "completion": completion, "answer": answer, "info": info}
    merged = {
        "prompt": state["prompt"],
        "completion": completion,
        "answer": answer,
        "state": state,
        "info": info if info is not None else {},
        "parser": object(),
        "task": None,
    }
    sig = inspect.signature(func)
    if not any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        merged = {key: value for key, value in merged.items() if key in sig.parameters}

    async def call() -> float:
        result = func(**merged)
        if inspect.isawaitable(result):
            result = await result
        return float(result)

    # the Rubric would turn an exception into 0.0; here it fails the test, as assay never raises
    return asyncio.run(call())


@dataclass
class _Message:
    """A message object with attributes, like verifiers' pydantic messages."""

    role: str
    content: Any


def test_the_reward_is_an_individual_function_not_a_group_one() -> None:
    for func in (verifiers.reward, verifiers.reward_async, make_reward(NUMBER)):
        assert not _is_group_func(func)
        assert func.__name__ == "assay"


def test_each_status_scores_as_verifiers_needs() -> None:
    func = make_reward(NUMBER)
    assert _rubric_call(func, "4", "4") == 1.0
    assert _rubric_call(func, "5", "4") == 0.0
    assert _rubric_call(func, "4", "four") == 0.0  # error: the label does not fit
    assert func.result("4", "four").status.value == "error"
    assert func.result("4", "four").reward is None


def test_message_lists_of_dicts_and_of_objects() -> None:
    func = make_reward(NUMBER)
    dicts = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    objects = [_Message("user", "2+2?"), _Message("assistant", [{"type": "text", "text": "4"}])]
    assert _rubric_call(func, dicts, "4") == 1.0
    assert _rubric_call(func, objects, "4") == 1.0
    assert _rubric_call(func, [_Message("assistant", None)], "4") == 0.0


def test_the_async_reward_is_awaited_like_the_rubric_does() -> None:
    func = make_reward(NUMBER, asynchronous=True)
    assert inspect.iscoroutinefunction(type(func).__call__)
    assert _rubric_call(func, "4", "4") == 1.0
    assert _rubric_call(func, "5", "4") == 0.0


def test_the_label_can_come_from_info() -> None:
    func = make_reward(NUMBER, info_key="number")
    assert _rubric_call(func, "4", "", {"number": 4}) == 1.0
    assert func.result("4", "", {}).status.value == "error"


def test_the_module_default_takes_the_label_as_its_task(monkeypatch: Any) -> None:
    monkeypatch.delenv("ASSAY_TEMPLATE", raising=False)
    task = json.dumps({"checks": [{"kind": "answer_number", "value": 4}]})
    assert _rubric_call(verifiers.reward, "4", task) == 1.0
    assert _rubric_call(verifiers.reward_async, "4", task) == 1.0
    assert _rubric_call(verifiers.reward, "4", "4") == 0.0
