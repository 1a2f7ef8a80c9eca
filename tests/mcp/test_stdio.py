"""``assay mcp`` driven by the MCP SDK's own client over stdio: the tools are listed with their
schemas, each answers with the same JSON as its CLI twin, bad arguments are a tool error naming
the field (and the server goes on), and files are read only under the workspace root."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from assay import Config, score_answers
from assay.episodes import judge_item
from tests.mcp.client import ASSAY, ROOT, call, document, refusal, run, serve, text

pytestmark = pytest.mark.slow  # each test starts a server: seconds on a busy machine

EQUALS_4 = [{"kind": "answer_equals", "value": "4"}]


def _quiet(stderr: Path) -> None:
    log = stderr.read_text() if stderr.exists() else ""
    assert "Traceback" not in log, log


def test_tools_are_listed_with_schemas_and_what_a_pass_means(tmp_path: Path) -> None:
    async def scenario() -> Any:
        async with serve(tmp_path / "err") as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run(scenario)}
    assert list(tools) == ["check", "verify_answer_key", "fill_hole", "goal"]
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
    for name in ("check", "fill_hole"):
        description = tools[name].description or ""
        assert "no reward" in description, name
    assert "verified" in (tools["check"].description or "")
    assert tools["fill_hole"].input_schema["required"] == ["file", "line", "column", "candidate"]


def test_check_verified_refuted_inconclusive_and_invalid(tmp_path: Path) -> None:
    """Each status comes back as judge_item gives it; bad arguments are refused, one line each,
    naming the field, and the server answers the next call."""

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with serve(tmp_path / "err") as session:
            out["verified"] = await call(session, "check", {"checks": EQUALS_4, "answer": "4"})
            out["refuted"] = await call(
                session, "check", {"id": "ep-7", "task": {"checks": EQUALS_4, "answer": "5"}}
            )
            out["inconclusive"] = await call(session, "check", {"checks": EQUALS_4})
            out["no_value"] = await call(
                session, "check", {"checks": [{"kind": "answer_equals"}], "answer": "4"}
            )
            out["extra_key"] = await call(
                session, "check", {"checks": EQUALS_4, "answer": "4", "verdict": "verified"}
            )
            out["both"] = await call(
                session, "check", {"checks": EQUALS_4, "task": {"checks": EQUALS_4}}
            )
            out["key"] = await call(
                session, "check", {"checks": EQUALS_4, "answer": "4", "idempotency_key": "k"}
            )
            out["overflow"] = await call(
                session,
                "check",
                {
                    "checks": [{**EQUALS_4[0], "weight": 1e308}] * 2,
                    "answer": "4",
                    "mode": "weighted",
                },
            )
            out["unknown_tool"] = await call(session, "grade", {})
            out["after"] = await call(session, "check", {"checks": EQUALS_4, "answer": "4"})
        return out

    out = run(scenario)
    config = Config.from_env()
    verified = document(out["verified"])
    expected = judge_item(
        {"id": "check", "checks": EQUALS_4, "answer": "4"}, root=None, config=config
    )
    assert verified == expected.to_json()
    assert (verified["status"], verified["reward"]) == ("verified", 1.0)
    refuted = document(out["refuted"])
    assert (refuted["id"], refuted["status"], refuted["reward"]) == ("ep-7", "refuted", 0.0)
    inconclusive = document(out["inconclusive"])
    assert (inconclusive["status"], inconclusive["reward"]) == ("inconclusive", None)
    assert "checks[0]" in refusal(out["no_value"]) and "value" in refusal(out["no_value"])
    assert "verdict" in refusal(out["extra_key"])
    assert "exactly one of" in refusal(out["both"])
    assert "idempotency_key" in refusal(out["key"])
    assert "unknown tool" in refusal(out["unknown_tool"])
    assert "NaN" not in text(out["overflow"])  # a non-finite reward never reaches the caller
    assert document(out["after"])["status"] == "verified"
    _quiet(tmp_path / "err")


def test_verify_answer_key_is_assay_verify(tmp_path: Path) -> None:
    key = {"t1": 3, "t2": "x"}
    cases = {
        "right": {"outputs": {"t1": 3, "t2": "x"}, "reported_reward": 1.0},
        "wrong_type": {"outputs": {"t1": "3", "t2": "x"}, "reported_reward": 1.0},
        "missing": {"outputs": {"t1": 3}},
        "malformed": ["not", "an", "object"],
    }

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with serve(tmp_path / "err") as session:
            for name, submission in cases.items():
                out[name] = await call(
                    session, "verify_answer_key", {"submission": submission, "answer_key": key}
                )
            out["bad_key"] = await call(
                session, "verify_answer_key", {"submission": {"outputs": {}}, "answer_key": [1]}
            )
            out["bad_detail"] = await call(
                session,
                "verify_answer_key",
                {"submission": {"outputs": {}}, "answer_key": {}, "detail": 1},
            )
            out["missing_key"] = await call(session, "verify_answer_key", {"submission": {}})
        return out

    out = run(scenario)
    for name, submission in cases.items():
        assert document(out[name]) == score_answers(submission, key).to_json(), name
    (tmp_path / "key.json").write_text(json.dumps(key))
    (tmp_path / "sub.json").write_text(json.dumps(cases["wrong_type"]))
    cli = subprocess.run(
        [str(ASSAY), "verify", "--detail", str(tmp_path / "sub.json"), str(tmp_path / "key.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert document(out["wrong_type"]) == json.loads(cli.stdout)
    assert document(out["right"])["reward"] == 1.0
    wrong = document(out["wrong_type"])
    assert (wrong["reward"], wrong["wrong"]) == (0.5, ["t1"])  # "3" is not 3
    assert refusal(out["bad_key"]).startswith("invalid arguments: answer_key:")
    assert "detail" in refusal(out["bad_detail"])
    assert "answer_key: required" in refusal(out["missing_key"])
    _quiet(tmp_path / "err")


def test_workspace_only_under_the_root(tmp_path: Path) -> None:
    """A workspace inside the root is judged; one outside it (by '..', by an absolute path, by
    a symlink) and any workspace on a server without a root are refused, never read."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "ep").mkdir(parents=True)
    (root / "ep" / "out.txt").write_text("done\n")
    outside.mkdir()
    (outside / "out.txt").write_text("done\n")
    (root / "link").symlink_to(outside)
    exists = [{"kind": "file_exists", "path": "out.txt"}]

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with serve(tmp_path / "err", root=root) as session:
            out["inside"] = await call(session, "check", {"checks": exists, "workspace": "ep"})
            for name, workspace in {
                "dotdot": "../outside",
                "absolute": str(outside),
                "symlink": "link",
            }.items():
                out[name] = await call(session, "check", {"checks": exists, "workspace": workspace})
        async with serve(tmp_path / "err") as session:
            out["no_root"] = await call(session, "check", {"checks": exists, "workspace": "ep"})
        return out

    out = run(scenario)
    assert document(out["inside"])["status"] == "verified"
    for name in ("dotdot", "absolute", "symlink", "no_root"):
        message = refusal(out[name])
        assert "workspace" in message, (name, message)
        assert "done" not in message
    assert "no workspace root" in refusal(out["no_root"])
    _quiet(tmp_path / "err")


async def _hole_calls(session: ClientSession, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    hole = {"file": name, "line": 6, "column": 13, "stdlib": False}
    out["goal"] = await call(session, "goal", hole, timeout=180)
    out["infer"] = await call(session, "goal", {**hole, "infer": "refl"}, timeout=180)
    out["solved"] = await call(session, "fill_hole", {**hole, "candidate": "refl"}, timeout=180)
    out["no_hole"] = await call(
        session, "fill_hole", {**hole, "line": 2, "column": 1, "candidate": "refl"}
    )
    out["outside"] = await call(session, "goal", {**hole, "file": "../Sym.agda"})
    out["bad_line"] = await call(session, "goal", {**hole, "line": True})
    return out


SYM = (
    "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
    "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' refl = {! !}\n"
)


@pytest.mark.agda
def test_fill_hole_and_goal_agree_with_the_cli(tmp_path: Path) -> None:
    """The interaction lane through MCP on a real Agda file: the goal is the CLI's, a right term
    solves the hole, and a position with no hole or a file outside the root is refused."""
    root = tmp_path / "root"
    root.mkdir()
    # a comment of its own: the session's judgment cache is shared, and another test may have
    # judged the same bytes (this test asserts a fresh judgment)
    source = SYM + f"-- {uuid.uuid4().hex}\n"
    (root / "Sym.agda").write_text(source)
    (tmp_path / "Sym.agda").write_text(source)

    async def scenario() -> dict[str, Any]:
        async with serve(tmp_path / "err", root=root) as session:
            return await _hole_calls(session, "Sym.agda")

    out = run(scenario, limit=600)
    goal = document(out["goal"])
    cli = subprocess.run(
        [str(ASSAY), "hole", "goal", str(root / "Sym.agda"), "6", "13", "--no-stdlib"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert goal == json.loads(cli.stdout)
    assert goal["goal"] == "x ≡ x" and "status" not in goal
    assert document(out["infer"])["inferred"]["term"] == "refl"
    solved = document(out["solved"])
    assert (solved["status"], solved["remaining_holes"]) == ("solved", 0)
    assert solved["verdict"]["cached"] is False  # judged now, in the session's private cache
    assert "no hole" in refusal(out["no_hole"])
    assert "file" in refusal(out["outside"]) and "workspace root" in refusal(out["outside"])
    assert "line" in refusal(out["bad_line"]) and "boolean" in refusal(out["bad_line"])
    _quiet(tmp_path / "err")
