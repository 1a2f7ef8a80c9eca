"""The CLI as a user meets it: real processes, real exit codes, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSAY = [sys.executable, "-m", "assay"]


def assay(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ASSAY, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def test_check_prints_one_json_report_per_task() -> None:
    result = assay("check", "examples/answer_number.json", "examples/hacks/hedged_number.json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["task"], r["status"], r["score"]) for r in lines] == [
        ("examples/answer_number.json", "verified", 1.0),
        ("examples/hacks/hedged_number.json", "refuted", 0.0),
    ]
    assert set(lines[1]["outcomes"][0]) == {"kind", "status", "detail", "evidence"}


def test_answer_file_overrides_the_answer(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("10 kg")
    result = assay("check", "examples/answer_number.json", "--answer-file", str(answer))
    report = json.loads(result.stdout)
    assert report["status"] == "refuted"
    assert "wrong unit" in report["outcomes"][0]["detail"]


def test_human_table() -> None:
    result = assay("check", "--human", "examples/hacks/reported_reward.json")
    assert result.returncode == 0
    assert "Did not satisfy the verifier" in result.stdout
    assert "wrong: t1, t2" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "{not json",
            "bad.json: not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2",
        ),
        (
            '{"checks": [{"kind": "answer_numbr", "value": 1}]}',
            "bad.json: checks[0]: unknown kind 'answer_numbr'",
        ),
        (
            '{"checks": [{"kind": "answer_number"}]}',
            "bad.json: checks[0] (answer_number): value: Field required",
        ),
        (
            '{"checks": [{"kind": "answer_number", "value": 1, "tolerence": 1}]}',
            "tolerence: unknown field",
        ),
        ('{"checks": []}', "there are no checks"),
    ],
)
def test_invalid_task_exits_2_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    result = assay("check", "bad.json", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_one_invalid_task_does_not_lose_the_others(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    result = assay("check", str(tmp_path / "bad.json"), "examples/answer_one_of.json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["status"] == "verified"
    assert "bad.json" in result.stderr


def test_missing_task_file() -> None:
    result = assay("check", "no/such/task.json")
    assert result.returncode == 2
    assert "no/such/task.json: cannot read: No such file or directory" in result.stderr


def test_missing_answer_file() -> None:
    result = assay("check", "examples/answer_number.json", "--answer-file", "nope.txt")
    assert result.returncode == 2
    assert "nope.txt: cannot read the answer file" in result.stderr


def test_verify() -> None:
    result = assay("verify", "examples/verify/submission.json", "examples/verify/key.json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "schema": "assay.answer_key_score/1",
        "reward": 2 / 3,
        "accepted": True,
    }
    detailed = json.loads(
        assay(
            "verify", "--detail", "examples/verify/submission.json", "examples/verify/key.json"
        ).stdout
    )
    assert detailed["wrong"] == ["b1"]


def test_verify_scores_a_malformed_submission_as_zero(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("reward: 1.0")
    result = assay("verify", str(tmp_path / "s.json"), "examples/verify/key.json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "schema": "assay.answer_key_score/1",
        "reward": 0.0,
        "accepted": False,
    }
    assert "scored as a malformed submission" in result.stderr


@pytest.mark.parametrize(
    ("key", "message"),
    [("[1, 2]", "the answer key must be a JSON object"), ("{", "the answer key is not valid JSON")],
)
def test_verify_refuses_a_bad_key(tmp_path: Path, key: str, message: str) -> None:
    (tmp_path / "k.json").write_text(key)
    result = assay("verify", "examples/verify/submission.json", str(tmp_path / "k.json"))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_kinds_lists_every_kind() -> None:
    result = assay("kinds")
    assert result.returncode == 0
    for name in ("answer_number", "sql_query", "web_receipt", "file_json"):
        assert name in result.stdout
    as_json = json.loads(assay("kinds", "--json").stdout)
    assert as_json["schema"] == "assay.kinds/1"
    assert {"kind", "summary", "spec"} <= set(as_json["kinds"][0])


def test_usage_errors_exit_2() -> None:
    result = assay("check")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_checker_conform_reproduces_every_fixture() -> None:
    result = assay(
        "checker",
        "conform",
        "examples/checkers/sat/check.py",
        "examples/checkers/sat/fixtures",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 6
    assert all(r["passed"] for r in rows)


def test_checker_conform_fails_a_wrong_checker(tmp_path: Path) -> None:
    wrong = tmp_path / "always_yes.py"
    wrong.write_text(
        "import json\nopen('/output/result.json', 'w').write(json.dumps({'result': 'verified'}))\n"
    )
    result = assay("checker", "conform", str(wrong), "examples/checkers/sat/fixtures")
    assert result.returncode == 1
    assert "1/6 fixtures reproduced" in result.stdout


def test_checker_conform_bad_fixtures_dir(tmp_path: Path) -> None:
    result = assay("checker", "conform", "examples/checkers/sat/check.py", str(tmp_path))
    assert result.returncode == 2
    assert "no fixture folders found" in result.stderr


def test_check_refuses_unisolated_runs_unless_allowed(tmp_path: Path) -> None:
    task = tmp_path / "t.json"
    task.write_text(json.dumps({"checks": [{"kind": "shell", "code": "echo hi", "value": "hi"}]}))
    assert (
        json.loads(assay("check", str(task)).stdout)["outcomes"][0]["evidence"]["isolation"]
        == "bwrap"
    )
    no_bwrap = {**os.environ, "PATH": str(tmp_path)}  # bwrap cannot be found
    refused = subprocess.run(
        [*ASSAY, "check", str(task)], capture_output=True, text=True, env=no_bwrap, cwd=ROOT
    )
    outcome = json.loads(refused.stdout)["outcomes"][0]
    assert (outcome["status"], "never runs unisolated" in outcome["detail"]) == ("error", True)
    allowed = subprocess.run(
        [*ASSAY, "check", "--allow-unisolated", str(task)],
        capture_output=True,
        text=True,
        env=no_bwrap,
        cwd=ROOT,
    )
    outcome = json.loads(allowed.stdout)["outcomes"][0]
    assert (outcome["status"], outcome["evidence"]["isolation"]) == ("verified", "none")


def test_hole_fill_and_goal(tmp_path: Path) -> None:
    obligation = tmp_path / "Sym.agda"
    obligation.write_text(
        "module Sym where\n\nopen import Agda.Builtin.Equality\n\n"
        "sym' : {A : Set} {x y : A} → x ≡ y → y ≡ x\nsym' refl = {! !}\n"
    )
    filled = assay("hole", "fill", str(obligation), "6", "13", "refl", "--no-stdlib")
    assert filled.returncode == 0, filled.stderr
    result = json.loads(filled.stdout)
    assert (result["status"], result["remaining_holes"], result["checked_from_source"]) == (
        "solved",
        0,
        True,
    )
    assert result["verdict"]["exit_code"] == 0 and "agda" in result["verdict"]["command"]
    goal = json.loads(assay("hole", "goal", str(obligation), "6", "13", "--no-stdlib").stdout)
    assert goal["goal"] == "x ≡ x" and "status" not in goal
    missing = assay("hole", "fill", str(obligation), "2", "1", "refl", "--no-stdlib")
    assert missing.returncode == 2
    assert "no hole" in missing.stderr and "Traceback" not in missing.stderr


def test_human_output_keeps_brackets(tmp_path: Path) -> None:
    """Details like "first expected: [9]" are text, not rich markup to be swallowed."""
    task = tmp_path / "t.json"
    database = ROOT / "examples" / "data" / "shop.sqlite"
    spec = {"kind": "sql_query", "database": str(database), "query": "SELECT 1", "rows": [[9]]}
    task.write_text(json.dumps({"checks": [spec]}))
    result = assay("check", "--human", str(task))
    assert "first expected: [9]" in " ".join(result.stdout.split())
    kinds = assay("kinds", cwd=ROOT)
    assert "list[text]" in kinds.stdout
