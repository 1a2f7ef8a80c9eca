"""The work turns its own refutation into ``error`` (no reward): a link too long to resolve.

``error`` says assay's machinery failed and carries no reward (the sample is masked), so it must
never be caused by the work. But a workspace file that is a symlink whose real path is longer
than the system's PATH_MAX (folders with 250-character names, or links to links: the agent
controls the length entirely) makes ``resolve_in_workspace`` return a path that ``exists()``,
``is_file()`` and ``open()`` then fail on with ``ENAMETOOLONG``: the kind raises, the engine
reports "failed inside assay", and a wrong file is never refuted. One wrong answer file per
episode masks every refutation of that episode.

The file checked is the work's, so what cannot be read is a finding about the work: refuted
(as a file over the read limit already is), never ``error``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay import Config, Status
from assay.episodes import judge_item

CONFIG = Config()
LEVELS = 17
"""Folders of 250-character names: 17 x 251 bytes is past Linux's 4096-byte PATH_MAX."""


def _far_file(ws: Path, text: str) -> str:
    """A file ``LEVELS`` folders deep under ``ws``, made through folder descriptors (its full
    path is too long for any path call); returns the path relative to ``ws``."""
    names = [chr(ord("a") + level) * 250 for level in range(LEVELS)]
    folder = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=folder)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = inner
        handle = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(handle, text.encode())
        os.close(handle)
    finally:
        os.close(folder)
    return "/".join(names) + "/f"


def _linked_far(ws: Path, name: str, text: str) -> None:
    """``ws/name`` -> a link to the far file (each link's own text stays under the limit)."""
    far = _far_file(ws, text)
    half = LEVELS // 2
    parts = far.split("/")
    os.symlink("/".join(parts[:half]), ws / "hop")
    os.symlink("hop/" + "/".join(parts[half:]), ws / name)


CHECKS: dict[str, dict[str, Any]] = {
    "file_equals": {"kind": "file_equals", "path": "out.txt", "value": "42"},
    "file_contains": {"kind": "file_contains", "path": "out.txt", "value": "42"},
    "file_json": {"kind": "file_json", "path": "out.txt", "value": 42},
    "json_schema": {"kind": "json_schema", "artifact": "out.txt", "schema": "string.json"},
    "sat_assignment": {"kind": "sat_assignment", "artifact": "out.txt", "formula": "one.cnf"},
}


@pytest.mark.parametrize("case", list(CHECKS))
def test_a_wrong_file_behind_a_too_long_link_is_refuted(tmp_path: Path, case: str) -> None:
    root = tmp_path / "root"
    ws = root / "ws"
    ws.mkdir(parents=True)
    (root / "string.json").write_text('{"type": "string"}')
    (root / "one.cnf").write_text("p cnf 1 1\n1 0\n")
    _linked_far(ws, "out.txt", "-1 0\n" if case == "sat_assignment" else "41")
    data = {"id": "ep", "workspace": "ws", "checks": [CHECKS[case]]}
    got = judge_item(data, root=root, config=CONFIG)
    assert got.status is Status.REFUTED, got.outcomes[0].detail[:200]
    assert got.reward == 0.0
