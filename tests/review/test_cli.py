"""The review commands through the CLI (in-process; the examples' end-to-end test drives the
whole escalation through them): users, protocol validation, and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli._app import app
from tests.review.helpers import escalation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/problems/reviewed-essay/review"


def _run(tmp_path: Path, *args: str, user: str = "admin") -> tuple[int, str, str]:
    env = {"ASSAY_DB": f"sqlite:///{tmp_path / 'a.db'}", "ASSAY_USER": user}
    done = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def test_user_add_accumulates_groups(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, "user", "add", "rev1", "--group", "reviewers", "--json")
    assert code == 0 and json.loads(out)["groups"] == ["reviewers"]
    code, out, _ = _run(tmp_path, "user", "add", "rev1", "--group", "experts", "--json")
    document = json.loads(out)
    assert len(document.pop("token")) == 43  # 32 random bytes, shown once
    assert document == {
        "schema": "assay.user/1",
        "name": "rev1",
        "groups": ["experts", "reviewers"],
        "roles": [],
    }
    code, _, err = _run(tmp_path, "user", "add", "a/b", "--group", "x")
    assert code == 2 and err.startswith("assay: error: NAME: ") and err.count("\n") == 1


def test_protocol_validate_reports_every_problem(tmp_path: Path) -> None:
    code, out, _ = _run(
        tmp_path, "protocol", "validate", str(EXAMPLE / "escalation.yaml"), "--json"
    )
    assert code == 0
    document = json.loads(out)
    assert document["valid"] is True and document["final"] == "decision"
    broken = escalation()
    broken["nodes"]["panel_vote"]["inputs"] = ["nobody"]
    broken["nodes"]["panel_vote"]["final"] = True
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps(broken))
    code, out, err = _run(tmp_path, "protocol", "validate", str(path))
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) >= 2 and all(line.startswith(f"assay: error: {path}: ") for line in lines)
    code, out, _ = _run(tmp_path, "protocol", "validate", str(path), "--json")
    assert code == 2 and json.loads(out)["valid"] is False


def test_review_seats_lists_nothing_on_an_empty_store(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, "review", "seats", "--as", "rev1", "--json")
    assert code == 0 and json.loads(out)["open"] == []
