"""The ``assay/check`` scorer, run by the real inspect_ai (0.3.285, installed) over a real eval.

The model is inspect's own ``mockllm/model`` with a callable ``custom_outputs`` (called with each
sample's messages, inspect_ai/model/_providers/mockllm.py ``MockLLM.generate``): it answers
whatever follows ``answer:`` in the prompt, so each sample's answer is fixed whatever order the
samples run in. Nothing reaches the network; the logs go to ``tmp_path``.

The mapping under test: verified -> ``CORRECT``, refuted -> ``INCORRECT``, inconclusive and
error -> ``Score.unscored`` (value NaN, inspect_ai/scorer/_metric.py ``Score.unscored``), left
out of ``accuracy``; the whole assay result in ``metadata["assay"]``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT
from inspect_ai.solver import generate

from assay.integrations.inspect_ai import check

NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}


def _answer_from_prompt(messages: list[Any], *_: Any) -> ModelOutput:
    prompt = messages[-1].text
    output = ModelOutput.from_content(model="mockllm/model", content=prompt.split("answer:", 1)[1])
    # with usage given, mockllm does not count tokens (tiktoken would fetch its tables online)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def _run(samples: list[Sample], scorer: Any, log_dir: Path) -> list[Any]:
    model = get_model("mockllm/model", custom_outputs=_answer_from_prompt)
    task = Task(dataset=samples, solver=generate(), scorer=scorer)
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", max_samples=2)
    assert log.status == "success", log.error
    assert log.samples is not None
    return sorted(log.samples, key=lambda sample: str(sample.id))


def _task(*checks: dict[str, Any]) -> str:
    return json.dumps({"checks": list(checks)})


@pytest.mark.slow
def test_a_real_eval_maps_each_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No template: each sample's target is its own JSON task."""
    monkeypatch.delenv("ASSAY_TEMPLATE", raising=False)
    four = _task({"kind": "answer_number", "value": 4})
    samples = [
        Sample(id="a-verified", input="answer:4", target=four),
        Sample(id="b-refuted", input="answer:5", target=four),
        Sample(
            id="c-inconclusive",
            input="answer:4",
            target=_task({"kind": "file_exists", "path": "o"}),
        ),
        Sample(id="d-error", input="answer:4", target="four"),
    ]
    scores = [sample.scores["check"] for sample in _run(samples, check(), tmp_path)]
    verified, refuted, inconclusive, error = scores

    assert verified.value == CORRECT and verified.answer == "4"
    assert verified.metadata["assay"]["status"] == "verified"
    assert verified.metadata["assay"]["reward"] == 1.0
    assert refuted.value == INCORRECT
    assert refuted.metadata["assay"]["status"] == "refuted"
    assert "expected 4" in refuted.explanation
    assert math.isnan(inconclusive.value) and inconclusive.reason == "inconclusive"
    assert "no workspace" in inconclusive.explanation
    assert inconclusive.metadata["assay"]["reward"] is None
    assert math.isnan(error.value) and error.reason == "scoring_failed"
    assert "does not fit the template" in error.explanation
    assert error.metadata["assay"]["status"] == "error"


def test_the_label_can_come_from_sample_metadata(tmp_path: Path) -> None:
    four = _task({"kind": "answer_number", "value": 4})
    samples = [Sample(id="m", input="answer:4", target="ignored", metadata={"task": four})]
    [sample] = _run(samples, check(metadata_key="task"), tmp_path)
    assert sample.scores["check"].value == CORRECT


def test_unscored_samples_are_left_out_of_accuracy(tmp_path: Path) -> None:
    samples = [
        Sample(id="a", input="answer:4", target="4"),
        Sample(id="b", input="answer:5", target="4"),
        Sample(id="c", input="answer:4", target="not a number"),
    ]
    model = get_model("mockllm/model", custom_outputs=_answer_from_prompt)
    task = Task(dataset=samples, solver=generate(), scorer=check(template=NUMBER))
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == pytest.approx(0.5)  # 1 of the 2 decided, not 1 of 3


def test_a_completion_holding_a_task_is_only_an_answer(tmp_path: Path) -> None:
    smuggled = json.dumps({"checks": [{"kind": "answer_contains", "value": "{"}]})
    samples = [Sample(id="s", input="answer:" + smuggled, target="4")]
    [sample] = _run(samples, check(template=NUMBER), tmp_path)
    assert sample.scores["check"].value != CORRECT


def test_a_template_that_does_not_load_fails_when_the_scorer_is_made(tmp_path: Path) -> None:
    from assay import InvalidInput

    bad = tmp_path / "template.json"
    bad.write_text('{"checks": [{"kind": "answer_number", "value": {"$label": "float"}}]}')
    with pytest.raises(InvalidInput, match="label"):
        check(template=str(bad))


def test_the_scorer_is_registered_under_the_assay_namespace() -> None:
    from inspect_ai.util import registry_info

    assert registry_info(check).name == "assay/check"


@pytest.mark.skipif(
    not any(ep.name == "assay" for ep in entry_points(group="inspect_ai")),
    reason="assay's package metadata has no inspect_ai entry point yet: add "
    '[project.entry-points.inspect_ai] assay = "assay.integrations.inspect_ai" to '
    "pyproject.toml and reinstall (pip install -e .)",
)
def test_inspect_finds_assay_check_by_name_alone(tmp_path: Path) -> None:
    """A fresh interpreter that never imports assay gets the scorer from inspect's registry."""
    code = (
        "import sys\n"
        "from inspect_ai.util import registry_create\n"
        "assert 'assay' not in sys.modules\n"
        "scorer = registry_create('scorer', 'assay/check')\n"
        "print(type(scorer).__name__, 'assay.integrations.inspect_ai' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["function", "True"]
