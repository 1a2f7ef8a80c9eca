"""The campaign, report and verifier commands through the CLI (in-process, SQLite): the same
``assay review seats|claim|respond`` a stage's reviewers use, ``--json`` documents, and the
terminal tables."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli._app import app
from tests.platform.conftest import make_problem
from tests.review16.helpers import items

SINGLE = Path(__file__).resolve().parents[2] / "examples/review/single-expert.yaml"


def _run(tmp_path: Path, *args: str, user: str = "boss") -> tuple[int, str, str]:
    env = {"ASSAY_DB": f"sqlite:///{tmp_path / 'a.db'}", "ASSAY_USER": user}
    done = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def test_a_campaign_through_the_cli_and_its_report(tmp_path: Path) -> None:
    assert _run(tmp_path, "user", "add", "exp1", "--group", "experts")[0] == 0
    folder = items(tmp_path, 3)
    code, out, _ = _run(
        tmp_path, "review", "campaign", "create", "--protocol", str(SINGLE), "--items",
        str(folder), "--sample", "2", "--seed", "5", "--json",
    )  # fmt: skip
    assert code == 0
    created = json.loads(out)
    assert created["schema"] == "assay.campaign/1" and len(created["items"]) == 2
    code, out, _ = _run(tmp_path, "review", "seats", "--json", user="exp1")
    seats = [s["seat"] for s in json.loads(out)["open"]]
    assert len(seats) == 2
    for seat, verdict in zip(seats, ["pass", "fail"], strict=True):
        code, out, _ = _run(tmp_path, "review", "claim", seat, "--json", user="exp1")
        uri = json.loads(out)["materials"][0]["uri"]
        response = {
            "verdict": verdict,
            "rationale": "read it",
            "citations": [uri],
            "confidence": 1,
            "assistance": [],
        }
        (tmp_path / "r.json").write_text(json.dumps(response))
        code, out, _ = _run(
            tmp_path, "review", "respond", seat, "--file", str(tmp_path / "r.json"), user="exp1"
        )
        assert code == 0 and "vote (m_of_n)" in out
    code, out, _ = _run(tmp_path, "review", "campaign", "show", created["campaign"], "--json")
    assert [i["decision"] for i in json.loads(out)["items"]] == ["accept", "reject"]
    code, out, _ = _run(tmp_path, "review", "campaign", "show", created["campaign"])
    assert code == 0 and "accept: review accept" in out
    code, out, _ = _run(tmp_path, "review", "report", "--json")
    (protocol,) = json.loads(out)["protocols"]
    assert protocol["title"] == "A single expert decides" and protocol["outcomes"] == {
        "accept": 1,
        "reject": 1,
    }
    code, out, _ = _run(tmp_path, "review", "report")
    assert code == 0 and "Decisions per reviewer-hour" in out and "A single" in out


def test_verifier_show_through_the_cli(tmp_path: Path) -> None:
    contract = {
        "verifier": "answer-check",
        "acceptance": "The answer is 42.",
        "stages": [
            {"name": "a", "type": "sandbox", "checks": [{"kind": "answer_equals", "value": "42"}]}
        ],
    }
    folder = make_problem(tmp_path, problem="answer", contract=contract)
    assert _run(tmp_path, "problem", "publish", str(folder))[0] == 0
    contract["acceptance"] = "The answer is exactly 42."
    folder = make_problem(tmp_path, problem="answer", contract=contract)
    assert _run(tmp_path, "problem", "publish", str(folder))[0] == 0
    # the same contract again, in another revision (a new title), is not a new version
    folder = make_problem(tmp_path, problem="answer", contract=contract, title="Renamed")
    assert _run(tmp_path, "problem", "publish", str(folder))[0] == 0
    code, out, _ = _run(tmp_path, "verifier", "show", "answer-check", "--json")
    document = json.loads(out)
    assert document["schema"] == "assay.verifier/1"
    assert [v["version"] for v in document["versions"]] == [1, 2]
    assert [len(v["revisions"]) for v in document["versions"]] == [1, 2]
    code, out, _ = _run(tmp_path, "verifier", "show", "answer-check")
    assert code == 0 and out.startswith("verifier answer-check: 2 contract version(s)")
    code, out, err = _run(tmp_path, "verifier", "show", "other")
    assert code == 2 and out == "" and err.count("\n") == 1 and "NAME: no contract" in err
