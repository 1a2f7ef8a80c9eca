"""Errors meet one boundary: every command, given bad input, exits 2 with one line naming the
field, and never a traceback (``assay.cli._boundary``, the exit-code table in the README)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from assay.cli import app
from assay.cli._boundary import boundary
from tests.cli.test_cli import ROOT, assay

AGDA_FILE = "module M where\n\nx : Set\nx = {! !}\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


SINGLE_EXPERT = Path(__file__).parents[2] / "examples/review/single-expert.yaml"
# (command words, arguments after them, files to write, the text the one stderr line holds)
BAD_INPUTS = [
    pytest.param(
        ["check"],
        ["t.json"],
        {"t.json": '{"checks": [{"kind": "answer_number"}]}'},
        "t.json: checks[0] (answer_number): value: Field required",
        id="check-spec",
    ),
    pytest.param(
        ["check"],
        [str(ROOT / "examples/answer_number.json"), "--answer-file", "nope.txt"],
        {},
        "nope.txt: cannot read the answer file",
        id="check-answer-file",
    ),
    pytest.param(
        ["verify"],
        ["s.json", "k.json"],
        {"s.json": '{"outputs": {}}', "k.json": "[1, 2]"},
        "k.json: the answer key must be a JSON object",
        id="verify-key",
    ),
    pytest.param(
        ["verify"],
        ["nope.json", "k.json"],
        {"k.json": "{}"},
        "nope.json: cannot read the submission",
        id="verify-submission",
    ),
    pytest.param(
        ["checker", "conform"],
        [str(ROOT / "examples/checkers/sat/check.py"), "fixtures"],
        {"fixtures/f1/artifacts/a.txt": "x", "fixtures/f1/expected.json": '{"result": "maybe"}'},
        "expected.json: 'result' must be one of",
        id="checker-conform-fixture",
    ),
    pytest.param(
        ["hole", "fill"],
        ["nope.agda", "4", "5", "Set"],
        {},
        "nope.agda: cannot read: No such file or directory",
        id="hole-fill-file",
    ),
    pytest.param(
        ["hole", "goal"],
        ["nope.agda", "4", "5"],
        {},
        "nope.agda: no such file",
        id="hole-goal-file",
    ),
    pytest.param(
        ["problem", "publish"],
        ["p", "--as", "alice"],
        {"p/problem.yaml": "id: p\ntitle: T\nstatement: s.md\nsurprise: 1\n", "p/s.md": "x"},
        "problem.yaml: surprise: unknown key",
        id="problem-publish-folder",
    ),
    pytest.param(
        ["mcp"], ["--workspace-root", "nope"], {}, "--workspace-root: not a folder", id="mcp-root"
    ),
    pytest.param(["problem", "show"], ["nope"], {}, "no problem 'nope'", id="problem-show"),
    pytest.param(
        ["serve"],
        ["--template", "t.json"],
        {"t.json": '{"checks": [{"kind": "answer_number", "value": {"$label": "nope"}}]}'},
        "t.json.checks[0].value: a placeholder is",
        id="serve-template",
    ),
    pytest.param(
        ["serve"],
        ["--verifier-root", "."],
        {},
        "--verifier-root: needs --workspace-root",
        id="serve-verifier-root",
    ),
    pytest.param(["batch"], ["nope.jsonl"], {}, "nope.jsonl: no such file", id="batch"),
    pytest.param(["prove"], ["nope"], {}, "nope: not a folder", id="prove"),
    pytest.param(
        ["prove"],
        ["d", "--no-exclusion"],
        {"d/A.agda": "module A where\n"},
        "--no-exclusion: is a control of retrieval",
        id="prove-control",
    ),
    pytest.param(
        ["prove"],
        ["d"],
        {"d/A.agda": "module A where\n\nx : Set\nx = Set\n"},
        "A.agda: has no {! !} hole",
        id="prove-no-hole",
    ),
    pytest.param(
        ["prove"],
        ["d"],
        {"d/A.agda": "x = {! !}\n", "d/obligations.json": '{"schema": "assay.obligations/1"}'},
        "obligations.json: obligations: Field required",
        id="prove-manifest",
    ),
    pytest.param(
        ["submit"], ["nope", "--summary", "42", "--as", "bob"], {}, "no problem 'nope'", id="submit"
    ),
    pytest.param(["show"], ["s-0", "--as", "bob"], {}, "no submission 's-0'", id="show"),
    pytest.param(["recheck"], ["s-0", "--as", "bob"], {}, "no submission 's-0'", id="recheck"),
    pytest.param(
        ["revoke"],
        ["--checker", "x", "--why", "w", "--as", "bob"],
        {},
        "is not a checker id",
        id="revoke",
    ),
    pytest.param(["withdraw"], ["s-0", "doc", "--as", "bob"], {}, "no submission", id="withdraw"),
    pytest.param(["nominate"], ["s-0", "--as", "bob"], {}, "no submission 's-0'", id="nominate"),
    pytest.param(
        ["external", "record"],
        ["s-0", "--stage", "x", "--result", "maybe", "--as", "lab"],
        {},
        "--result: 'maybe'",
        id="external-record",
    ),
    pytest.param(["preflight"], ["nope"], {}, "nope: is not a folder", id="preflight"),
    pytest.param(["user", "add"], ["bob"], {}, "--group: give at least one", id="user-add"),
    pytest.param(
        ["user", "add"],
        ["bob", "--role", "boss"],
        {},
        "--role: 'boss' is not a role",
        id="user-role",
    ),
    pytest.param(["review", "seats"], ["--as", "a b"], {}, "is not a user name", id="review-seats"),
    pytest.param(["review", "claim"], ["x", "--as", "b"], {}, "not a seat id", id="review-claim"),
    pytest.param(
        ["review", "respond"],
        ["x", "--file", "r.json", "--as", "b"],
        {"r.json": "{}"},
        "SEAT: 'x' is not a seat id",
        id="review-respond",
    ),
    pytest.param(["review", "show"], ["s-0", "--as", "b"], {}, "no submission", id="review-show"),
    pytest.param(
        ["review", "material"],
        ["x", "assay://y", "--as", "b"],
        {},
        "not a seat",
        id="review-material",
    ),
    pytest.param(["verifier", "show"], ["a/b"], {}, "NAME: 'a/b' is not a verifier", id="verifier"),
    pytest.param(
        ["review", "campaign", "create"],
        ["--protocol", str(SINGLE_EXPERT), "--items", "runs:colour=red", "--as", "m"],
        {},
        "--items: 'colour=red': a runs query",
        id="campaign-create",
    ),
    pytest.param(
        ["review", "campaign", "show"],
        ["cmp-0", "--as", "m"],
        {},
        "no campaign",
        id="campaign-show",
    ),
    pytest.param(
        ["review", "report"], ["--protocol", "abcdef"], {}, "--protocol: 'abcdef'", id="report"
    ),
    pytest.param(
        ["protocol", "validate"],
        ["p.yaml"],
        {"p.yaml": "nodes: {}"},
        "p.yaml: nodes:",
        id="protocol",
    ),
]


GOAL_INPUTS = [
    pytest.param(["8", "3"], "no hole opens at line 8, column 3", id="no-hole-there"),
    pytest.param(["8", "14", "--infer", "a\tb"], "one line of printable text", id="bad-term"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "expected"), GOAL_INPUTS)
def test_hole_goal_input_problems_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    """The lane runs (real Agda) and the caller's position or term is what cannot be used."""
    obligation = ROOT / "examples" / "proofs" / "Nat-plus-comm.agda"
    result = assay("hole", "goal", str(obligation), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    _one_line(result, expected)


def _commands() -> set[tuple[str, ...]]:
    """Every command the CLI has, as the words that name it (``("checker", "conform")``)."""
    found: set[tuple[str, ...]] = set()

    def walk(command: Any, words: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)  # a group (typer vendors click)
        if subcommands is None:
            found.add(words)
            return
        for name, sub in subcommands.items():
            walk(sub, (*words, name))

    walk(typer.main.get_command(app), ())
    return found


def _one_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("assay: error: ") and expected in lines[0], lines[0]


def test_every_command_with_input_is_covered() -> None:
    covered = {tuple(p.values[0]) for p in BAD_INPUTS}  # type: ignore[arg-type]
    # kinds reads no input; ledger verify reads only the store ASSAY_DB names
    assert covered == _commands() - {("kinds",), ("ledger", "verify")}


@pytest.mark.parametrize(("words", "args", "files", "expected"), BAD_INPUTS)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, words: list[str], args: list[str], files: dict[str, str], expected: str
) -> None:
    _write(tmp_path, files)
    result = assay(*words, *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    _one_line(result, expected)


@pytest.mark.parametrize(
    "words", [["check", "t.json"], ["verify", "s.json", "k.json"], ["checker", "conform", "c", "f"]]
)
def test_bad_configuration_exits_2_naming_the_variable(tmp_path: Path, words: list[str]) -> None:
    _write(tmp_path, {"t.json": '{"checks": []}', "s.json": "{}", "k.json": "{}"})
    env = {**os.environ, "ASSAY_MAX_FILE_BYTES": "-1"}
    result = subprocess.run(
        [sys.executable, "-m", "assay", *words],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    _one_line(result, "ASSAY_MAX_FILE_BYTES: Input should be greater than 0")


@pytest.mark.parametrize("words", sorted(_commands()))
def test_usage_errors_exit_2_without_a_traceback(words: tuple[str, ...]) -> None:
    result = assay(*words, "--no-such-option")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "No such option: --no-such-option" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_machine_that_cannot_exits_3(tmp_path: Path) -> None:
    """No bwrap and no agda on PATH: `hole fill` cannot judge here (exit 3), one line."""
    _write(tmp_path, {"M.agda": AGDA_FILE})
    env = {**os.environ, "PATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "assay", "hole", "fill", "M.agda", "4", "5", "Set", "--no-stdlib"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout == ""
    _one_line(result, "")


def test_the_readme_exit_code_table_lists_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("| command | 0 | 1 | 2 | 3 |\n", 1)[1].split("\n\n", 1)[0]
    rows = [row.split("|")[1].strip().strip("`") for row in table.splitlines()[1:]]
    assert sorted(tuple(row.split()) for row in rows) == sorted(_commands())


def test_every_command_is_behind_the_boundary() -> None:
    guarded = boundary(lambda: None).__code__  # every wrapped command runs this same code

    def callbacks(group: typer.Typer) -> list[Any]:
        found = [command.callback for command in group.registered_commands]
        for sub in group.registered_groups:
            assert sub.typer_instance is not None
            found += callbacks(sub.typer_instance)
        return found

    found = callbacks(app)
    assert len(found) == len(_commands())
    assert [c.__name__ for c in found if c.__code__ is not guarded] == []
