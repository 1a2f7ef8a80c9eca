"""The verl adapter, called exactly as verl calls a ``custom_reward_function``.

verl is not installed here (it pulls torch); the calls below copy its call sites, read from
verl-project/verl at commit 1dda039b (2026-08-22):

- ``verl/workers/reward_manager/naive.py`` (lines 131-150) and ``dapo.py`` (102-115):
  ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)``; a dict's
  ``"score"`` is the reward and every key is appended to ``reward_extra_info[key]``;
- ``verl/experimental/reward_loop/reward_manager/naive.py`` (30, 58-90): the same keywords plus
  ``reward_router_address`` and ``reward_model_tokenizer``; awaited when
  ``inspect.iscoroutinefunction(compute_score)``;
- ``verl/trainer/ppo/reward.py`` (32-86): the configured function is wrapped in
  ``partial(_call_with_kwargs[_async], raw_fn, reward_kwargs)``, so config ``reward_kwargs``
  (``template``) arrive as keywords;
- ``verl/workers/reward_manager/prime.py`` (31-87): ``partial(evaluation_func, task, completion,
  reference, task_extra_info)`` run in a ``ProcessPoolExecutor``; the result goes through
  ``float(result)``;
- ``verl/workers/reward_manager/batch.py`` (70-76, 98-110): ``compute_score(data_sources=,
  solution_strs=, ground_truths=, extra_infos=, **reward_kwargs)`` returning one score per sample.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import pickle
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay import Config, InvalidInput
from assay.episodes import Template
from assay.integrations import Judge, verl
from assay.integrations.verl import SCORE_KEYS, VerlReward, make_reward

NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}
TASK_FOUR = json.dumps({"checks": [{"kind": "answer_number", "value": 4}]})


class _Crashing(Template):
    """A template whose machinery fails: what a bug inside assay looks like to the adapter."""

    def item(self, *, id: str, label: Any, answer: str) -> dict[str, Any]:
        raise RuntimeError("boom")


NO_WORKSPACE_TASK = json.dumps({"checks": [{"kind": "file_exists", "path": "x"}]})
CASES = [
    # (name, template ("crash": assay's own machinery fails), solution_str, ground_truth,
    #  expected status, expected score)
    ("verified", NUMBER, "4", "4", "verified", 1.0),
    ("refuted", NUMBER, "5", "4", "refuted", 0.0),
    ("inconclusive", None, "4", NO_WORKSPACE_TASK, "inconclusive", 0.0),
    ("label-does-not-fit", NUMBER, "4", "four", "error", 0.0),
    ("label-not-a-task", None, "4", "4", "error", 0.0),
    ("label-of-no-checks", None, "4", '{"checks": []}', "error", 0.0),
    ("label-none", NUMBER, "4", None, "error", 0.0),
    ("label-a-list", NUMBER, "4", ["4"], "error", 0.0),
    ("solution-not-text", NUMBER, None, "4", "error", 0.0),
    ("crash", "crash", "4", "4", "error", 0.0),
]


def _reward(template: Any) -> VerlReward:
    if template == "crash":
        return VerlReward(Judge(_Crashing(None), None, Config()))
    return make_reward(template)


@pytest.mark.parametrize(("name", "template", "solution", "truth", "status", "score"), CASES)
def test_every_call_returns_the_same_keys_and_types(
    name: str, template: Any, solution: Any, truth: Any, status: str, score: float
) -> None:
    reward = _reward(template)
    result = reward.compute_score(
        data_source="gsm8k", solution_str=solution, ground_truth=truth, extra_info={"index": 7}
    )
    assert tuple(result) == SCORE_KEYS
    assert [type(result[key]) for key in SCORE_KEYS] == [float, str, float, float, str]
    assert result["status"] == status
    assert result["score"] == score
    assert result["verified"] == (1.0 if status == "verified" else 0.0)
    assert result["decided"] == (1.0 if status in ("verified", "refuted") else 0.0)
    assert (result["reason"] == "") == (status == "verified")


def test_verl_stacks_the_dicts_into_arrays_of_one_type_per_key() -> None:
    """What the naive manager does with the dicts (``reward_extra_info[key].append(value)``),
    then ``np.array`` per key as verl's metrics do: one dtype per key, never ``object``."""
    extra: dict[str, list[Any]] = defaultdict(list)
    reward = make_reward(NUMBER)
    for solution, truth in [("4", "4"), ("5", "4"), ("4", "four"), (None, "4")]:
        result = reward.compute_score(
            data_source="d", solution_str=solution, ground_truth=truth, extra_info={}
        )
        for key, value in result.items():
            extra[key].append(value)
    assert set(extra) == set(SCORE_KEYS)
    kinds = {key: np.array(values).dtype.kind for key, values in extra.items()}
    assert kinds == {"score": "f", "status": "U", "verified": "f", "decided": "f", "reason": "U"}
    assert np.mean(extra["decided"]) == 0.5


def _call_with_kwargs(raw_fn: Any, extra_kwargs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """verl/trainer/ppo/reward.py ``_call_with_kwargs``, verbatim in behaviour."""
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


async def _call_with_kwargs_async(
    raw_fn: Any, extra_kwargs: dict[str, Any], *args: Any, **kwargs: Any
) -> Any:
    return await raw_fn(*args, **{**kwargs, **extra_kwargs})


def _template_file(tmp_path: Path, body: dict[str, Any] = NUMBER) -> Path:
    path = tmp_path / "template.json"
    path.write_text(json.dumps(body))
    return path


def test_the_module_function_takes_its_template_from_reward_kwargs(tmp_path: Path) -> None:
    fn = partial(_call_with_kwargs, verl.compute_score, {"template": str(_template_file(tmp_path))})
    result = fn(data_source="d", solution_str="4", ground_truth="4", extra_info={})
    assert result["status"] == "verified"


def test_the_module_function_takes_its_template_from_assay_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEMPLATE", str(_template_file(tmp_path)))
    assert verl.compute_score("d", "4", "4")["status"] == "verified"
    monkeypatch.delenv("ASSAY_TEMPLATE")
    # without a template the label must be a task: the same call is now an error, not a pass
    assert verl.compute_score("d", "4", "4")["status"] == "error"
    assert verl.compute_score("d", "4", TASK_FOUR)["status"] == "verified"


def test_a_template_that_does_not_load_stops_training_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misconfigured template is raised (naming it), never 0.0 on every sample."""
    missing = tmp_path / "nope.json"
    with pytest.raises(InvalidInput, match=r"nope\.json"):
        make_reward(missing)
    monkeypatch.setenv("ASSAY_TEMPLATE", str(missing))
    with pytest.raises(InvalidInput, match="ASSAY_TEMPLATE"):
        verl.compute_score("d", "4", "4")


def test_the_reward_loop_extra_keywords_are_accepted() -> None:
    result = make_reward(NUMBER).compute_score(
        data_source="d",
        solution_str="4",
        ground_truth="4",
        extra_info={"num_turns": None, "rollout_reward_scores": {}},
        reward_router_address="127.0.0.1:1",
        reward_model_tokenizer=None,
    )
    assert result["status"] == "verified"


def test_the_async_variants_are_coroutine_functions_verl_awaits(tmp_path: Path) -> None:
    bound = make_reward(NUMBER).compute_score_async
    wrapped = partial(_call_with_kwargs_async, verl.compute_score_async, {})
    for fn in (bound, verl.compute_score_async, wrapped):
        assert inspect.iscoroutinefunction(fn)
    result = asyncio.run(bound(data_source="d", solution_str="4", ground_truth="4", extra_info={}))
    assert result == _verified_dict()
    fn = partial(_call_with_kwargs_async, verl.compute_score_async, {"template": "/nonexistent"})
    with pytest.raises(InvalidInput):
        asyncio.run(fn(data_source="d", solution_str="4", ground_truth="4", extra_info={}))
    undecided = asyncio.run(verl.compute_score_async("d", "4", "four"))
    assert undecided["status"] == "error" and undecided["score"] == 0.0


def _prime_call(fn: Any, task: Any, completion: Any, reference: Any, extra: Any) -> float:
    """prime.py: ``partial(evaluation_func, task, completion, reference, task_extra_info)`` in
    a process pool, then ``float(result)`` for a number."""
    with ProcessPoolExecutor(max_workers=1) as pool:
        result = pool.submit(partial(fn, task, completion, reference, extra)).result(timeout=120)
    assert isinstance(result, int | float | bool)
    return float(result)


def test_the_float_variant_runs_in_primes_process_pool(tmp_path: Path) -> None:
    reward = make_reward(NUMBER)
    assert _prime_call(reward.compute_score_float, "d", "4", "4", None) == 1.0
    assert _prime_call(reward.compute_score_float, "d", "5", "4", None) == 0.0
    assert _prime_call(verl.compute_score_float, "d", "4", TASK_FOUR, {}) == 1.0
    assert _prime_call(verl.compute_score_float, "d", "4", "four", {}) == 0.0  # error: 0.0


def test_the_reward_functions_pickle() -> None:
    """prime ships the function to worker processes; a factory-made one travels as plain data."""
    reward = pickle.loads(pickle.dumps(make_reward(NUMBER)))
    assert reward.compute_score("d", "4", "4") == _verified_dict()
    assert pickle.loads(pickle.dumps(reward.compute_score_float))("d", "4", "4") == 1.0
    assert pickle.loads(pickle.dumps(verl.compute_score_float))("d", "4", TASK_FOUR) == 1.0


def _verified_dict() -> dict[str, Any]:
    return {"score": 1.0, "status": "verified", "verified": 1.0, "decided": 1.0, "reason": ""}


def test_the_batch_variant_takes_verls_batch_keywords() -> None:
    """batch.py passes numpy object arrays for ``data_sources`` and a list of extra_infos."""
    fn = partial(_call_with_kwargs, make_reward(NUMBER).compute_score_batch, {})
    results = fn(
        data_sources=np.array(["a", "b", "c"], dtype=object),
        solution_strs=["4", "5", "4"],
        ground_truths=["4", "4", "four"],
        extra_infos=[{"rollout_reward_scores": {}}] * 3,
    )
    assert [r["status"] for r in results] == ["verified", "refuted", "error"]
    assert all(tuple(r) == SCORE_KEYS for r in results)
    assert [r["score"] for r in results] == [1.0, 0.0, 0.0]
    module = verl.compute_score_batch(
        data_sources=["a"], solution_strs=["4"], ground_truths=[TASK_FOUR], extra_infos=None
    )
    assert module == [_verified_dict()]


def test_batch_lists_of_different_lengths_are_refused_before_judging() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        make_reward(NUMBER).compute_score_batch(
            data_sources=["a"], solution_strs=["4", "4"], ground_truths=["4", "4"]
        )


def test_a_dict_label_from_parquet_fills_a_json_key_template() -> None:
    """verl datasets often store ``reward_model.ground_truth`` as a struct (a dict)."""
    template = {"checks": [{"kind": "answer_equals", "value": {"$label": "json", "key": "target"}}]}
    reward = make_reward(template)
    assert reward.compute_score("d", "yes", {"target": "yes"})["status"] == "verified"
    assert reward.compute_score("d", "yes", {"other": "yes"})["status"] == "error"


def test_the_sample_id_points_back_to_the_row() -> None:
    result = make_reward(NUMBER).result("gsm8k", "4", "four", {"index": 12})
    assert result.id == "gsm8k/12"


def test_a_task_label_read_from_parquet_as_numpy_arrays_is_read_as_lists() -> None:
    """pandas gives a parquet struct's lists back as numpy arrays and its ints as numpy ints."""
    label = {
        "checks": np.array(
            [{"kind": "answer_number", "value": np.int64(4), "tolerance": np.float64(0.0)}],
            dtype=object,
        ),
        "mode": np.str_("all"),
    }
    reward = make_reward()
    assert reward.compute_score("d", "4", label)["status"] == "verified"
    assert reward.compute_score("d", "5", label)["status"] == "refuted"
