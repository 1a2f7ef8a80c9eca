"""One item that crashes the item reader loses every other item of its request.

``judge_item`` promises never to raise and ``parse_episode`` to raise only ``InvalidInput``, and
the service's first pass catches only that. But ``_inside`` resolves each named path with
``Path.resolve()``, which on Python 3.11 raises ``RuntimeError("Symlink loop ...")`` for a path
through a link loop. Anyone who can write under the root (an agent in its own workspace there)
can make such a loop (``ln -s loop loop``), and an item naming a path through it then turns a
whole ``/v1/verify`` (or ``/get_reward``) request into a 500: every other item's verdict is lost.
Values a Python caller can hand the reader (NaN, bytes, a set in an ``Any`` field of a check)
escape the same way, from the item's fingerprint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.episodes import judge_item

CONFIG = Config()
GOOD = {"id": "good", "checks": [{"kind": "answer_number", "value": 1}], "answer": "1"}
EXISTS = [{"kind": "file_exists", "path": "out.txt"}]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "ws").mkdir(parents=True)
    (root / "ws" / "out.txt").write_text("ok")
    os.symlink("loop", root / "loop")  # what an agent can leave under the root
    os.symlink("loop", root / "ws" / "loop")
    return root


LOOPED: dict[str, dict[str, Any]] = {
    "workspace is a loop": {"workspace": "loop", "checks": EXISTS},
    "workspace through a loop": {"workspace": "loop/inner", "checks": EXISTS},
    "workspace's own loop": {"workspace": "ws/loop", "checks": EXISTS},
    "hidden_python file is a loop": {
        "checks": [{"kind": "hidden_python", "file": "loop"}],
    },
    "sql_query database through a loop": {
        "answer": "1",
        "checks": [
            {"kind": "sql_query", "database": "ws/loop/db", "query": "select 1", "rows": [[1]]}
        ],
    },
    "json_schema schema is a loop": {
        "workspace": "ws",
        "checks": [{"kind": "json_schema", "artifact": "out.txt", "schema": "loop"}],
    },
}


@pytest.mark.parametrize("case", list(LOOPED))
def test_a_path_through_a_symlink_loop_is_an_invalid_item(root: Path, case: str) -> None:
    got = judge_item({"id": "bad", **LOOPED[case]}, root=root, config=CONFIG, where="items[1]")
    assert got.status is Status.ERROR and got.reward is None
    assert got.outcomes[0].detail.startswith("items[1]")


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), b"bytes", {1, 2}],
    ids=["nan", "inf", "bytes", "set"],
)
def test_a_value_json_cannot_hold_is_an_invalid_item(root: Path, value: Any) -> None:
    """A Python caller (an adapter's label dict, a dataset row with a pandas NaN) can pass it."""
    checks = [{"kind": "file_json", "path": "out.txt", "value": {"score": value}}]
    data = {"id": "bad", "workspace": "ws", "checks": checks}
    got = judge_item(data, root=root, config=CONFIG, where="items[0]")
    assert got.status is Status.ERROR and got.reward is None


@pytest.mark.parametrize("case", ["workspace is a loop", "hidden_python file is a loop"])
def test_one_looping_item_does_not_lose_the_request(root: Path, case: str) -> None:
    from starlette.testclient import TestClient

    from assay.service import Settings, create_app

    app = create_app(Settings(workspace_root=root, sandbox_jobs=1))
    items = [GOOD, {"id": "bad", **LOOPED[case]}, {**GOOD, "id": "good2"}]
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/verify", json={"items": items})
    assert response.status_code == 200, response.text[:300]
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["verified", "error", "verified"]


def test_one_looping_label_does_not_lose_the_openrlhf_batch(root: Path, tmp_path: Path) -> None:
    """The template takes the workspace from the label: one looping label, one 500."""
    from starlette.testclient import TestClient

    from assay.service import Settings, create_app

    template = tmp_path / "template.json"
    template.write_text(json.dumps({"workspace": {"$label": "text"}, "checks": EXISTS}))
    app = create_app(Settings(workspace_root=root, template=template, sandbox_jobs=1))
    body = {"query": ["p:a", "p:b"], "prompts": ["p:", "p:"], "labels": ["ws", "loop"]}
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/get_reward", json=body)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["rewards"] == [1.0, 0.0]
    assert response.json()["extra_logs"]["masked"] == [0.0, 1.0]
