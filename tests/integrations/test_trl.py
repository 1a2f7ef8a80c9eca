"""The TRL adapter, called exactly as ``GRPOTrainer`` calls a reward function.

TRL is not installed here (it pulls torch); the calls copy ``trl/trainer/grpo_trainer.py`` of
huggingface/trl at commit f2cd5771 (2026-07-24, version 1.10.0.dev0):

- 1617-1631: ``reward_kwargs`` holds every dataset column but ``prompt``/``completion``/
  ``completion_ids`` as a list, plus ``trainer_state``, ``log_extra``, ``log_metric``;
- 1659-1663: ``reward_func(prompts=, completions=, completion_ids=, **reward_kwargs)``, then
  ``None`` becomes NaN, which 2676-2747 leave out of the reward and the advantage baseline;
- 2176-2189: a conversational completion is ``[{"role": "assistant", "content": text}]`` (or a
  ``parse_response`` message, which may carry ``tool_calls``);
- 524 and ``trl/trainer/utils.py`` 224-232: the logged name is ``getattr(func, "__name__",
  type(func).__name__)``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from assay import InvalidInput
from assay.integrations import trl
from assay.integrations.trl import make_reward_func

NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}
LOGGED: dict[str, list[Any]] = {}


def _trl_call(func: Any, completions: list[Any], **columns: list[Any]) -> list[float]:
    """What ``GRPOTrainer._calculate_rewards`` does for a synchronous reward function; what the
    function logs through ``log_extra`` is kept in ``LOGGED``."""
    logged: dict[str, list[Any]] = {}
    reward_kwargs: dict[str, Any] = dict(columns)
    reward_kwargs["trainer_state"] = object()
    reward_kwargs["log_extra"] = lambda column, values: logged.setdefault(column, []).extend(values)
    reward_kwargs["log_metric"] = lambda name, value: None
    output = func(
        prompts=["What is 2+2?"] * len(completions),
        completions=completions,
        completion_ids=[[1, 2, 3]] * len(completions),
        **reward_kwargs,
    )
    LOGGED.clear()
    LOGGED.update(logged)
    return [reward if reward is not None else math.nan for reward in output]


def test_decided_samples_get_their_reward_and_undecided_ones_are_masked() -> None:
    func = make_reward_func(NUMBER)
    task = json.dumps({"checks": [{"kind": "file_exists", "path": "x"}]})
    rewards = _trl_call(
        make_reward_func(),
        ["4", "5", "4", "4"],
        ground_truth=[
            json.dumps({"checks": [{"kind": "answer_number", "value": 4}]}),
            json.dumps({"checks": [{"kind": "answer_number", "value": 4}]}),
            task,  # inconclusive: no workspace
            "4",  # error: with no template a label must be a task
        ],
    )
    assert rewards[:2] == [1.0, 0.0]
    assert math.isnan(rewards[2]) and math.isnan(rewards[3])
    assert LOGGED == {"assay_status": ["verified", "refuted", "inconclusive", "error"]}
    raw = func(prompts=["p"], completions=["x"], ground_truth=["four"])
    assert raw == [None]


def test_conversational_completions_are_read_from_the_last_assistant_message() -> None:
    completions = [
        [{"role": "assistant", "content": "4"}],
        [
            {"role": "assistant", "content": "5", "tool_calls": [{"name": "calc"}]},
            {"role": "tool", "content": "4"},
            {"role": "assistant", "content": "The answer is 4"},
        ],
        [{"role": "assistant", "content": [{"type": "text", "text": "4"}]}],
        [{"role": "assistant", "content": None, "tool_calls": [{"name": "calc"}]}],
        [{"role": "tool", "content": "4"}],  # no assistant message: the model said nothing
    ]
    rewards = _trl_call(make_reward_func(NUMBER), completions, ground_truth=["4"] * 5)
    assert rewards == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_a_completion_of_no_shape_assay_reads_is_masked_not_scored() -> None:
    rewards = _trl_call(make_reward_func(NUMBER), [42, [1, 2], b"4"], ground_truth=["4"] * 3)
    assert all(math.isnan(reward) for reward in rewards)


def test_the_label_column_is_configurable() -> None:
    func = make_reward_func(NUMBER, label_column="answer")
    assert _trl_call(func, ["4"], answer=["4"], ground_truth=["5"]) == [1.0]


def test_a_missing_label_column_is_a_setup_error_naming_the_columns() -> None:
    with pytest.raises(InvalidInput, match=r"'ground_truth'.*\['answer', 'task'\]"):
        _trl_call(make_reward_func(NUMBER), ["4"], answer=["4"], task=["math"])


def test_the_name_trl_logs() -> None:
    func = make_reward_func(NUMBER, name="assay_math")
    assert getattr(func, "__name__", type(func).__name__) == "assay_math"
    assert trl.reward_func.__name__ == "assay"


def test_the_module_default_reads_assay_template(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "template.json"
    path.write_text(json.dumps(NUMBER))
    monkeypatch.setenv("ASSAY_TEMPLATE", str(path))
    assert _trl_call(trl.reward_func, ["4", "5"], ground_truth=["4", "4"]) == [1.0, 0.0]


def test_labels_and_completions_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 completions but 1 labels"):
        make_reward_func(NUMBER)(prompts=["p", "p"], completions=["4", "4"], ground_truth=["4"])
