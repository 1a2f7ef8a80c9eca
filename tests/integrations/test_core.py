"""What every adapter shares: choosing the template, reading a completion, never raising."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay import InvalidInput
from assay.episodes import Template
from assay.integrations import completion_text, make_judge
from assay.integrations._core import default_judge

NUMBER = {"checks": [{"kind": "answer_number", "value": {"$label": "number"}}]}
TASK_FOUR = json.dumps({"checks": [{"kind": "answer_number", "value": 4}]})


def _file(tmp_path: Path, body: Any) -> Path:
    path = tmp_path / "template.json"
    path.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize("form", ["path", "str", "template", "mapping"])
def test_each_way_of_naming_a_template(tmp_path: Path, form: str) -> None:
    path = _file(tmp_path, NUMBER)
    source: Any = {
        "path": path,
        "str": str(path),
        "template": Template.from_json(NUMBER),
        "mapping": NUMBER,
    }[form]
    judge = make_judge(source)
    assert judge.judge(label="4", completion="4").status.value == "verified"
    assert judge.judge(label="4", completion="5").status.value == "refuted"


def test_no_template_means_each_label_is_its_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_TEMPLATE", raising=False)
    judge = make_judge()
    assert judge.judge(label=TASK_FOUR, completion="4").status.value == "verified"
    assert judge.judge(label=json.loads(TASK_FOUR), completion="4").status.value == "verified"
    assert judge.judge(label="4", completion="4").status.value == "error"


def test_assay_template_is_read_and_a_change_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEMPLATE", str(_file(tmp_path, NUMBER)))
    assert default_judge().judge(label="4", completion="4").status.value == "verified"
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps({"checks": [{"kind": "answer_equals", "value": {"$label": "text"}}]})
    )
    monkeypatch.setenv("ASSAY_TEMPLATE", str(other))
    assert default_judge().judge(label="4", completion=" 4 ").status.value == "verified"
    assert default_judge().judge(label="4", completion="four").status.value == "refuted"


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("not json", "template.json"),
        ({"checks": [{"kind": "answer_number", "value": {"$label": "float"}}]}, "value"),
        ({"mode": "all"}, "template.json"),
        ({"checks": [], "answer": "4"}, "answer"),
    ],
)
def test_a_template_that_does_not_load_is_raised_naming_it(
    tmp_path: Path, body: Any, where: str
) -> None:
    path = tmp_path / "template.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    with pytest.raises(InvalidInput, match=where):
        make_judge(path)


def test_a_root_that_is_not_a_folder_is_raised(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="root"):
        make_judge(NUMBER, root=tmp_path / "missing")


def test_paths_are_refused_without_a_root_and_read_inside_one(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.txt").write_text("hi")
    label = {"checks": [{"kind": "file_exists", "path": "out.txt"}], "workspace": "ws"}
    outside = make_judge().judge(label=label, completion="")
    assert outside.status.value == "error" and "workspace" in outside.outcomes[0].detail
    inside = make_judge(root=tmp_path).judge(label=label, completion="")
    assert inside.status.value == "verified"
    escape = {**label, "workspace": "../" + tmp_path.name + "/ws/../.."}
    assert make_judge(root=tmp_path).judge(label=escape, completion="").status.value == "error"


@pytest.mark.parametrize(
    "label", [None, 4.5, ["a"], object(), {"checks": "nope"}, "{", "", '{"checks": [{}]}']
)
def test_a_label_of_any_shape_never_raises_and_never_passes(label: Any) -> None:
    for judge in (make_judge(), make_judge(NUMBER)):
        result = judge.judge(label=label, completion="4")
        assert result.status.value in ("error", "refuted")
        assert result.status.value != "verified"


@dataclass
class _Msg:
    role: Any
    content: Any


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        ("plain", "plain"),
        ([{"role": "assistant", "content": "a"}], "a"),
        ([{"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}], "a"),
        ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "b"),
        ([_Msg("system", "s"), _Msg("assistant", "x")], "x"),
        (
            [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}],
            "a",
        ),
        ([{"role": "assistant", "content": None}], ""),
        ([{"role": "user", "content": "u"}], ""),
        ([], ""),
        (None, None),
        (4, None),
        (b"4", None),
        (["4"], None),
        ([{"role": "assistant", "content": 4}], None),
        ([{"role": "assistant", "content": [{"type": "text", "text": 4}]}], None),
    ],
)
def test_completion_text(completion: Any, text: str | None) -> None:
    assert completion_text(completion) == text


def test_the_framework_free_adapters_import_no_framework() -> None:
    """verl, TRL and verifiers users import assay's module without inspect_ai (or torch)
    being loaded; ``assay.integrations`` itself loads none of the adapter modules."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import assay.integrations\n"
        "assert 'assay.integrations.verl' not in sys.modules\n"
        "import assay.integrations.verl, assay.integrations.trl, assay.integrations.verifiers\n"
        "print(sorted(m for m in ('inspect_ai', 'torch', 'trl', 'verl', 'verifiers',"
        " 'fastapi') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
