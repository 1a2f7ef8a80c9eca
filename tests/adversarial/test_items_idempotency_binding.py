"""An idempotency key replays a verdict earned by other work: the item's files are not bound.

``Episode.fingerprint`` is the sha256 of the item's JSON (without ``id`` and ``idempotency_key``),
and a key is bound to it so that "a key can never buy a verdict for other work". But the work of
an item that names a workspace is the workspace's files, and the fingerprint never reads them: the
same item body over a workspace whose files changed has the same fingerprint, so the service
answers the stored ``verified``. A trainer that reuses workspace folders (``slot-3``) and derives
its key from the request body (the natural retry key) then rewards a later episode's wrong work
with an earlier episode's verdict; the agent only has to repeat a winning final answer. The same
holds for verifier-side files (a database or hidden check updated between two requests).

Fixes, any of: bind the key to the content of every file the item names (a digest of the
workspace and the verifier-side files, taken when it is judged), keep no result for an item that
names a path, or refuse ``idempotency_key`` on such items (naming the field).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import Status


def _database(path: Path, value: str) -> None:
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("create table t(x)")
    connection.execute("insert into t values (?)", (value,))
    connection.commit()
    connection.close()


# item body; (right work, wrong work) written before each of the two requests.
Writer = Callable[[Path], None]
CASES: dict[str, tuple[dict[str, Any], Writer, Writer]] = {
    "workspace file rewritten": (
        {
            "workspace": "slot-3",
            "checks": [{"kind": "file_equals", "path": "out.txt", "value": "42"}],
        },
        lambda root: (root / "slot-3" / "out.txt").write_text("42"),
        lambda root: (root / "slot-3" / "out.txt").write_text("41"),
    ),
    "workspace JSON rewritten": (
        {
            "workspace": "slot-3",
            "answer": "done",
            "checks": [{"kind": "file_json", "path": "r.json", "key": "ok", "value": True}],
        },
        lambda root: (root / "slot-3" / "r.json").write_text('{"ok": true}'),
        lambda root: (root / "slot-3" / "r.json").write_text('{"ok": false}'),
    ),
    "verifier database updated": (
        {
            "answer": "7",
            "checks": [
                {
                    "kind": "sql_query",
                    "database": "answers.sqlite",
                    "query": "select x from t",
                    "compare": "answer_value",
                }
            ],
        },
        lambda root: _database(root / "answers.sqlite", "7"),
        lambda root: _database(root / "answers.sqlite", "8"),
    ),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "slot-3").mkdir(parents=True)
    return tmp_path / "root"


@pytest.mark.parametrize("case", list(CASES))
def test_a_key_never_replays_a_verdict_for_changed_files(root: Path, case: str) -> None:
    from starlette.testclient import TestClient

    from assay.service import Settings, create_app

    body, right, wrong = CASES[case]
    item = {"id": "ep-1", "idempotency_key": "sha-of-the-body", **body}
    app = create_app(Settings(workspace_root=root, sandbox_jobs=1))
    with TestClient(app) as client:
        right(root)
        first = client.post("/v1/verify", json={"items": [item]}).json()["results"][0]
        assert first["status"] == Status.VERIFIED.value
        wrong(root)  # the next episode in the same slot: wrong work, the same final answer
        second = client.post("/v1/verify", json={"items": [{**item, "id": "ep-2"}]})
    got = second.json()["results"][0]
    assert got["status"] != Status.VERIFIED.value, "the first episode's verdict was replayed"
