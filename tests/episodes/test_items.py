"""Items: the one reading of an episode that HTTP, batch, MCP and the adapters share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay import Config, InvalidInput, Status
from assay.episodes import EpisodeResult, item_id, judge, judge_item, parse_episode

CONFIG = Config()
NUMBER = [{"kind": "answer_number", "value": 10}]


def result(data: object, root: Path | None = None) -> EpisodeResult:
    return judge_item(data, root=root, config=CONFIG, where="items[0]")


def test_a_finding_carries_a_reward_and_no_finding_carries_none() -> None:
    verified = result({"id": "a", "checks": NUMBER, "answer": "10"})
    refuted = result({"id": "b", "checks": NUMBER, "answer": "11"})
    missing = result({"id": "c", "checks": NUMBER})
    assert (verified.status, verified.score, verified.reward) == (Status.VERIFIED, 1.0, 1.0)
    assert (refuted.status, refuted.score, refuted.reward) == (Status.REFUTED, 0.0, 0.0)
    assert missing.status is Status.INCONCLUSIVE
    assert missing.score is None and missing.reward is None
    assert verified.to_json()["schema"] == "assay.result/1"
    assert list(verified.to_json()) == ["schema", "id", "status", "score", "reward", "outcomes"]


def test_weighted_reward_is_the_verified_share() -> None:
    checks = [
        {"kind": "answer_contains", "value": "10", "weight": 3},
        {"kind": "answer_contains", "value": "zzz", "weight": 1},
    ]
    got = result({"id": "w", "checks": checks, "answer": "10", "mode": "weighted"})
    assert got.status is Status.REFUTED
    assert got.reward == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"checks": NUMBER, "answer": "10"}, "id"),
        ({"id": "", "checks": NUMBER, "answer": "10"}, "id"),
        ({"id": "x" * 201, "checks": NUMBER, "answer": "10"}, "id"),
        ({"id": "a", "answer": "10"}, "exactly one of"),
        ({"id": "a", "checks": NUMBER, "task": {"checks": NUMBER}, "answer": "10"}, "exactly one"),
        ({"id": "a", "checks": NUMBER, "answer": 10}, "answer"),
        ({"id": "a", "checks": NUMBER, "answer": "10", "reward": 1.0}, "reward: unknown field"),
        ({"id": "a", "checks": [], "answer": "10"}, "no checks"),
        ({"id": "a", "checks": [{"kind": "answer_number"}], "answer": "1"}, "checks[0]"),
        ({"id": "a", "checks": NUMBER, "answer": "10", "mode": "most"}, "mode"),
        ({"id": "a", "checks": NUMBER, "answer": "1", "idempotency_key": ""}, "idempotency_key"),
        ({"id": "a", "task": {"checks": NUMBER, "score": 1}, "answer": "10"}, "task.score"),
        ([1, 2], "JSON object"),
        ({"id": "a", "label_does_not_fit": "no"}, "does not fit"),
    ],
)
def test_an_invalid_item_is_an_error_naming_its_field(data: object, field: str) -> None:
    got = result(data)
    assert got.status is Status.ERROR and got.reward is None
    assert got.outcomes[0].detail.startswith("items[0]")
    assert field in got.outcomes[0].detail


def test_the_id_of_an_invalid_item_is_kept_when_it_has_one() -> None:
    assert result({"id": "keep", "checks": []}).id == "keep"
    assert item_id({"id": 5}) == "" and item_id("x") == ""


def test_top_level_fields_override_the_task() -> None:
    task = {"checks": NUMBER, "answer": "11"}
    assert result({"id": "a", "task": task}).status is Status.REFUTED
    assert result({"id": "a", "task": task, "answer": "10"}).status is Status.VERIFIED


def test_runs_code_marks_sandboxed_kinds_only() -> None:
    python = parse_episode(
        {"id": "p", "checks": [{"kind": "python", "code": "pass"}]}, root=None, config=CONFIG
    )
    answer = parse_episode({"id": "n", "checks": NUMBER, "answer": "1"}, root=None, config=CONFIG)
    assert python.runs_code and not answer.runs_code


def test_the_fingerprint_is_the_work_not_its_names() -> None:
    def fingerprint(data: dict[str, object]) -> str:
        return parse_episode(data, root=None, config=CONFIG).fingerprint

    base = {"id": "a", "checks": NUMBER, "answer": "10"}
    assert fingerprint(base) == fingerprint({**base, "id": "b", "idempotency_key": "k"})
    assert fingerprint(base) != fingerprint({**base, "answer": "11"})
    assert fingerprint(base) != fingerprint(
        {**base, "checks": [{"kind": "answer_number", "value": 11}]}
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "ws").mkdir(parents=True)
    (tmp_path / "root" / "ws" / "out.txt").write_text("ok")
    (tmp_path / "root" / "schema.json").write_text('{"type": "object"}')
    (tmp_path / "root" / "ws" / "doc.json").write_text("{}")
    (tmp_path / "secret.json").write_text('{"type": "object", "title": "SECRET-TEXT"}')
    os.symlink(tmp_path / "secret.json", tmp_path / "root" / "link.json")
    os.symlink(tmp_path, tmp_path / "root" / "up")
    return tmp_path / "root"


def test_paths_inside_the_root_are_read(root: Path) -> None:
    schema = [{"kind": "json_schema", "artifact": "doc.json", "schema": "schema.json"}]
    assert result({"id": "a", "checks": schema, "workspace": "ws"}, root).status is Status.VERIFIED
    exists = [{"kind": "file_exists", "path": "out.txt"}]
    assert result({"id": "b", "checks": exists, "workspace": "ws"}, root).status is Status.VERIFIED


@pytest.mark.parametrize(
    ("workspace", "schema"),
    [
        ("/tmp", "schema.json"),
        ("../", "schema.json"),
        ("ws/../..", "schema.json"),
        ("up", "schema.json"),
        ("ws\\..\\..", "schema.json"),
        ("ws", "/etc/passwd"),
        ("ws", "../secret.json"),
        ("ws", "link.json"),
        ("ws", "up/secret.json"),
    ],
)
def test_no_path_leads_outside_the_root(root: Path, workspace: str, schema: str) -> None:
    checks = [{"kind": "json_schema", "artifact": "doc.json", "schema": schema}]
    got = result({"id": "a", "checks": checks, "workspace": workspace}, root)
    assert got.status is Status.ERROR
    assert "SECRET-TEXT" not in str(got.to_json())


def test_without_a_root_no_path_is_read(root: Path) -> None:
    checks = [{"kind": "file_exists", "path": "out.txt"}]
    got = result({"id": "a", "checks": checks, "workspace": str(root / "ws")})
    assert got.status is Status.ERROR
    assert "no workspace root" in got.outcomes[0].detail
    with pytest.raises(InvalidInput, match="no workspace root"):
        parse_episode(
            {"id": "a", "checks": [{"kind": "json_schema", "artifact": "d", "schema": "s.json"}]},
            root=None,
            config=CONFIG,
        )


def test_judge_turns_assay_failures_into_error(monkeypatch: pytest.MonkeyPatch) -> None:
    episode = parse_episode({"id": "a", "checks": NUMBER, "answer": "10"}, root=None, config=CONFIG)

    def broken(self: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(episode.task), "run", broken)
    got = judge(episode)
    assert got.status is Status.ERROR and got.reward is None
    assert "disk on fire" in got.outcomes[0].detail


def test_a_description_is_allowed_as_in_task_files() -> None:
    task = {"checks": NUMBER, "description": "ten"}
    assert result({"id": "a", "task": task, "answer": "10"}).status is Status.VERIFIED
    assert result({"id": "a", **task, "answer": "10"}).status is Status.VERIFIED
