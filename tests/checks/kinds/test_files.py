from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assay import Config, InvalidSpec, Status
from tests.helpers import run_kind

V, R, I = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "out.txt").write_text("result: 42\nstatus: done\n")
    (root / "sub" / "data.json").write_text(
        '{"score": 1, "ok": true, "ratio": 0.5, "items": [{"name": "a"}, {"name": "b"}], "nested": {"1": "one"}}'
    )
    (root / "dup.json").write_text('{"a": 1, "a": 2}')
    (root / "nan.json").write_text('{"a": NaN}')
    (root / "binary.bin").write_bytes(b"\xff\xfe\x00")
    (root / "empty.txt").write_text("")
    (tmp_path / "secret.txt").write_text("outside the workspace: 42")
    os.symlink(tmp_path / "secret.txt", root / "escape.txt")
    os.symlink(root / "out.txt", root / "inside_link.txt")
    os.symlink(root / "nowhere", root / "dangling")
    return root


CASES: list[tuple[str, dict[str, Any], Status, str]] = [
    ("file_exists", {"path": "out.txt"}, V, "exists"),
    ("file_exists", {"path": "missing.txt"}, R, "does not exist"),
    ("file_exists", {"path": "sub"}, R, "not a regular file"),
    ("file_exists", {"path": "inside_link.txt"}, V, "exists"),
    ("file_exists", {"path": "escape.txt"}, R, "escapes the workspace (through a symlink)"),
    ("file_exists", {"path": "../secret.txt"}, R, "escapes the workspace (with '..')"),
    ("file_exists", {"path": "/etc/passwd"}, R, "escapes the workspace: absolute"),
    ("file_absent", {"path": "missing.txt"}, V, "absent"),
    ("file_absent", {"path": "out.txt"}, R, "remove it"),
    ("file_absent", {"path": "dangling"}, R, "remove it"),
    ("file_absent", {"path": "../secret.txt"}, R, "escapes"),
    ("file_contains", {"path": "out.txt", "value": "result: 42"}, V, "contains"),
    ("file_contains", {"path": "out.txt", "value": "result: 43"}, R, "does not contain"),
    ("file_contains", {"path": "out.txt", "pattern": r"^status: \w+$"}, R, "no match"),
    ("file_contains", {"path": "out.txt", "pattern": r"(?m)^status: \w+$"}, V, "matches"),
    ("file_contains", {"path": "empty.txt", "value": "x"}, R, "does not contain"),
    ("file_contains", {"path": "escape.txt", "value": "42"}, R, "escapes the workspace"),
    ("file_contains", {"path": "binary.bin", "value": "x"}, R, "not UTF-8 text"),
    ("file_contains", {"path": "missing.txt", "value": "x"}, R, "does not exist"),
    (
        "file_equals",
        {"path": "out.txt", "value": "result: 42\nstatus: done"},
        V,
        "expected content",
    ),
    (
        "file_equals",
        {"path": "out.txt", "value": "result: 42\nstatus: failed"},
        R,
        "line 2: expected 'status: failed', found 'status: done'",
    ),
    ("file_equals", {"path": "out.txt", "value": "result: 42"}, R, "expected 1 lines, found 2"),
    ("file_json", {"path": "sub/data.json", "key": "score", "value": 1}, V, "expected value"),
    (
        "file_json",
        {"path": "sub/data.json", "key": "score", "value": True},
        R,
        "holds 1 (int); expected true (bool)",
    ),
    ("file_json", {"path": "sub/data.json", "key": "ok", "value": 1}, R, "holds true (bool)"),
    (
        "file_json",
        {"path": "sub/data.json", "key": "score", "value": 1.0},
        R,
        "expected 1.0 (float)",
    ),
    ("file_json", {"path": "sub/data.json", "key": "score", "value": 1.0, "tolerance": 0.0}, V, ""),
    ("file_json", {"path": "sub/data.json", "key": "ok", "value": 1, "tolerance": 1.0}, R, "bool"),
    (
        "file_json",
        {"path": "sub/data.json", "key": "ratio", "value": 0.51, "tolerance": 0.02},
        V,
        "",
    ),
    ("file_json", {"path": "sub/data.json", "key": "items.1.name", "value": "b"}, V, ""),
    (
        "file_json",
        {"path": "sub/data.json", "key": "items.2.name", "value": "b"},
        R,
        "no key 'items.2.name' (found up to 'items')",
    ),
    ("file_json", {"path": "sub/data.json", "key": "nested.1", "value": "one"}, V, ""),
    (
        "file_json",
        {"path": "sub/data.json", "key": "items", "value": [{"name": "a"}, {"name": "b"}]},
        V,
        "",
    ),
    (
        "file_json",
        {"path": "sub/data.json", "key": "items", "value": [{"name": "a"}]},
        R,
        "expected",
    ),
    ("file_json", {"path": "dup.json", "value": {"a": 2}}, R, "duplicate key 'a'"),
    ("file_json", {"path": "nan.json", "key": "a", "value": 1}, R, "NaN is not a JSON value"),
    ("file_json", {"path": "out.txt", "value": 1}, R, "not strict JSON"),
]


@pytest.mark.parametrize(("kind", "spec", "status", "message"), CASES)
def test_workspace_kinds(
    ws: Path, kind: str, spec: dict[str, Any], status: Status, message: str
) -> None:
    outcome = run_kind(kind, workspace=ws, **spec)
    assert outcome.status is status, outcome.detail
    assert message in outcome.detail


def _snapshot(root: Path) -> dict[str, tuple[float, bytes]]:
    return {
        str(p): (p.lstat().st_mtime, p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
        for p in sorted(root.rglob("*"))
    }


def test_the_workspace_is_never_written(ws: Path) -> None:
    before = _snapshot(ws)
    for kind, spec, _, _ in CASES:
        run_kind(kind, workspace=ws, **spec)
    assert _snapshot(ws) == before


def test_no_workspace_is_inconclusive() -> None:
    assert run_kind("file_exists", path="x").status is I


def test_a_file_over_the_read_limit_is_refuted(ws: Path) -> None:
    """The work wrote the file: its size is a finding, never a way to mask a wrong file."""
    (ws / "big.txt").write_text("x" * 2000)
    outcome = run_kind(
        "file_contains", workspace=ws, path="big.txt", value="x", config=Config(max_file_bytes=1000)
    )
    assert outcome.status is R
    assert "larger than the 1000 byte read limit" in outcome.detail


def test_catastrophic_pattern_in_a_file_is_inconclusive(ws: Path) -> None:
    (ws / "slow.txt").write_text("a" * 40 + "!")
    outcome = run_kind(
        "file_contains",
        workspace=ws,
        path="slow.txt",
        pattern="(a|aa)+$",
        config=Config(regex_timeout=0.2),
    )
    assert outcome.status is I


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("file_contains", {"path": "a", "value": "x", "pattern": "x"}, "exactly one of 'value'"),
        ("file_contains", {"path": "a"}, "exactly one of 'value'"),
        ("file_contains", {"path": "a", "pattern": "x?"}, "matches the empty string"),
        ("file_contains", {"path": "a", "value": ""}, "value: must not be empty"),
        ("file_exists", {"path": ""}, "path: must not be empty"),
        ("file_json", {"path": "a"}, "value: Field required"),
        ("file_json", {"path": "a", "value": 1, "key": "a..b"}, "key"),
        ("file_json", {"path": "a", "value": 1, "tolerance": -0.1}, "tolerance"),
    ],
)
def test_file_specs_are_validated(kind: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpec, match=message):
        run_kind(kind, **spec)


def test_file_json_null_is_a_legitimate_expected_value(ws: Path) -> None:
    (ws / "n.json").write_text('{"a": null}')
    assert run_kind("file_json", workspace=ws, path="n.json", key="a", value=None).status is V
    assert run_kind("file_json", workspace=ws, path="n.json", key="a", value=0).status is R
