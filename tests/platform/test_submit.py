"""Submitting: artifacts are refused at the door by role (missing, unknown, oversized), the
refusal is recorded, and the kinds that exist today work in a contract unchanged: the summary is
the answer, each artifact is ``{role}`` in the workspace, and checks name references by key."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assay._errors import InvalidInput
from assay.platform import Platform
from assay.status import Status
from tests.platform.conftest import (
    ANSWER_CONTRACT,
    SCHEMA_CONTRACT,
    SCHEMA_FILES,
    artifact,
    make_problem,
    rows,
)

TWO_ROLES: dict[str, Any] = {
    "roles": [
        {"name": "doc", "required": True, "max_bytes": 100},
        {"name": "notes", "required": False, "max_bytes": 100},
    ],
    "references": SCHEMA_CONTRACT["references"],
    "acceptance": "The document meets the schema.",
    "stages": SCHEMA_CONTRACT["stages"],
}


@pytest.fixture
def two_roles(platform: Platform, tmp_path: Path) -> Platform:
    platform.publish(make_problem(tmp_path, contract=TWO_ROLES, files=SCHEMA_FILES), "alice")
    return platform


BAD_ROLES: list[tuple[dict[str, str], list[str]]] = [
    ({"notes": "n.txt"}, ["'doc'", "required"]),
    ({"doc": "d.json", "extra": "n.txt"}, ["unknown role 'extra'", "doc, notes"]),
    ({"doc": "big.json"}, ["'doc'", "101 bytes", "100 byte limit"]),
    ({"doc": "d.json", "notes": "bigdir"}, ["'notes'", "100 byte limit"]),
    ({"../doc": "d.json"}, ["'../doc' is not a role name"]),
]


def test_bad_roles_are_refused_naming_the_role_and_recorded(
    two_roles: Platform, tmp_path: Path
) -> None:
    artifact(tmp_path, "d.json", '{"x": 1}')
    artifact(tmp_path, "n.txt", "notes")
    artifact(tmp_path, "big.json", '{"x": 1}' + " " * 93)
    artifact(tmp_path, "bigdir/a.txt", "a" * 60)
    artifact(tmp_path, "bigdir/sub/b.txt", "b" * 60)
    for n, (given, words) in enumerate(BAD_ROLES):
        paths = {role: tmp_path / "work" / name for role, name in given.items()}
        with pytest.raises(InvalidInput) as caught:
            two_roles.submit("demo", paths, None, f"user{n}")
        for word in words:
            assert word in str(caught.value), (given, str(caught.value))
        refused = two_roles.ledger.find(kind="submission.refused", participant=f"user{n}")
        assert len(refused) == 1
        assert refused[0].problem == "demo"
        for word in words:
            assert word in refused[0].body["reason"]
    assert not two_roles.ledger.find(kind="submission.made")


def test_a_symlinked_artifact_is_refused(two_roles: Platform, tmp_path: Path) -> None:
    folder = tmp_path / "work" / "docdir"
    folder.mkdir(parents=True)
    (folder / "link").symlink_to("/etc/hostname")
    with pytest.raises(InvalidInput, match="symbolic link"):
        two_roles.submit("demo", {"doc": folder}, None, "bob")


def test_nothing_submitted_is_refused(platform: Platform, tmp_path: Path) -> None:
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    with pytest.raises(InvalidInput, match="nothing was submitted"):
        platform.submit("demo", {}, None, "bob")


def test_an_optional_role_may_be_left_out(two_roles: Platform, tmp_path: Path) -> None:
    run = two_roles.submit("demo", {"doc": artifact(tmp_path, "d.json", '{"x": 1}')}, None, "bob")
    assert run.status is Status.VERIFIED
    assert run.stages[0].inputs["artifact:doc"]


ANSWER_KINDS: list[tuple[dict[str, Any], str, str]] = [
    ({"kind": "answer_equals", "value": "42"}, " 42\n", "41"),
    ({"kind": "answer_number", "value": 3.5, "tolerance": 0.01}, "x = 3.5", "3.6"),
    ({"kind": "answer_one_of", "values": ["Paris", "paris"]}, "Paris", "Lyon"),
    ({"kind": "answer_regex", "pattern": "^[0-9]{4}$"}, "2024", "24"),
    ({"kind": "answer_contains", "value": "QED"}, "so QED.", "so."),
]


def test_answer_kinds_judge_the_summary(platform: Platform, tmp_path: Path) -> None:
    for check, good, bad in ANSWER_KINDS:
        name = check["kind"].replace("_", "-")
        contract = {
            "acceptance": "The answer is right.",
            "stages": [{"name": "answer", "type": "sandbox", "checks": [check]}],
        }
        platform.publish(make_problem(tmp_path, problem=name, contract=contract), "alice")
        verified = platform.submit(name, {}, good, "bob")
        refuted = platform.submit(name, {}, bad, "bob")
        assert verified.status is Status.VERIFIED, (name, verified.detail)
        assert refuted.status is Status.REFUTED, (name, refuted.detail)
        assert refuted.stages[0].checks[0]["checker"].startswith(f"assay:{check['kind']}@")


def test_file_kinds_read_the_artifact_by_role(platform: Platform, tmp_path: Path) -> None:
    contract = {
        "roles": [{"name": "result.json"}, {"name": "code"}],
        "acceptance": "The result says 7 and the code has a main.",
        "stages": [
            {
                "name": "files",
                "type": "sandbox",
                "checks": [
                    {"kind": "file_json", "path": "result.json", "key": "answer", "value": 7},
                    {"kind": "file_exists", "path": "code/main.py"},
                ],
            }
        ],
    }
    platform.publish(make_problem(tmp_path, contract=contract), "alice")
    code = tmp_path / "work" / "code"
    artifact(tmp_path, "code/main.py", "print(7)\n")
    good = platform.submit(
        "demo",
        {"result.json": artifact(tmp_path, "r.json", '{"answer": 7}'), "code": code},
        None,
        "bob",
    )
    assert good.status is Status.VERIFIED, good.detail
    bad = platform.submit(
        "demo",
        {"result.json": artifact(tmp_path, "r2.json", '{"answer": 7.0}'), "code": code},
        None,
        "bob",
    )
    assert bad.status is Status.REFUTED
    view = platform.show(good.submission, "bob")
    folder = next(a for a in view.artifacts if a.role == "code")
    assert folder.size == len("print(7)\n")


def test_sql_kind_reads_a_reference_database_by_key(platform: Platform, tmp_path: Path) -> None:
    folder = make_problem(
        tmp_path,
        contract={
            "references": [{"key": "db", "path": "reference/shop.sqlite"}],
            "acceptance": "The answer is the number of orders.",
            "stages": [
                {
                    "name": "count",
                    "type": "sandbox",
                    "checks": [
                        {
                            "kind": "sql_query",
                            "database": "db",
                            "query": "SELECT count(*) FROM orders",
                            "compare": "answer_value",
                        }
                    ],
                }
            ],
        },
    )
    (folder / "reference").mkdir()
    with sqlite3.connect(folder / "reference" / "shop.sqlite") as db:
        db.execute("CREATE TABLE orders (id INTEGER)")
        db.executemany("INSERT INTO orders VALUES (?)", [(1,), (2,), (3,)])
    db.close()
    platform.publish(folder, "alice")
    assert platform.submit("demo", {}, "3", "bob").status is Status.VERIFIED
    assert platform.submit("demo", {}, "4", "bob").status is Status.REFUTED


PYTHON_CONTRACT: dict[str, Any] = {
    "roles": [{"name": "solution.py", "max_bytes": 10_000}],
    "acceptance": "add(a, b) returns a + b.",
    "stages": [
        {
            "name": "tests",
            "type": "sandbox",
            "checks": [
                {
                    "kind": "python",
                    "code": "from solution import add\nassert add(2, 3) == 5\nassert add(-1, 1) == 0\n",
                }
            ],
        }
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "db_url", ["sqlite"], indirect=True
)  # the sandbox is not database-specific
def test_python_check_runs_the_artifact_in_bwrap(platform: Platform, tmp_path: Path) -> None:
    platform.publish(make_problem(tmp_path, contract=PYTHON_CONTRACT), "alice")
    good = artifact(tmp_path, "good.py", "def add(a, b):\n    return a + b\n")
    bad = artifact(tmp_path, "bad.py", "def add(a, b):\n    return a * b\n")
    verified = platform.submit("demo", {"solution.py": good}, None, "bob")
    assert verified.status is Status.VERIFIED, verified.detail
    assert verified.stages[0].isolation == "bwrap"
    refuted = platform.submit("demo", {"solution.py": bad}, None, "bob")
    assert refuted.status is Status.REFUTED, refuted.detail


def test_attempts(platform: Platform, tmp_path: Path) -> None:
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    first = platform.show(platform.submit("demo", {}, "1", "bob").submission, "bob")
    same = platform.show(platform.submit("demo", {}, "2", "bob").submission, "bob")
    assert same.attempt == first.attempt  # default: the latest attempt
    fresh = platform.show(platform.submit("demo", {}, "3", "bob", "new").submission, "bob")
    assert fresh.attempt != first.attempt
    latest = platform.show(platform.submit("demo", {}, "4", "bob").submission, "bob")
    assert latest.attempt == fresh.attempt
    named = platform.show(platform.submit("demo", {}, "5", "bob", first.attempt).submission, "bob")
    assert named.attempt == first.attempt
    other = platform.show(platform.submit("demo", {}, "6", "carol").submission, "carol")
    assert other.attempt not in (first.attempt, fresh.attempt)
    before = rows(platform)
    with pytest.raises(InvalidInput, match="not one of your attempts"):
        platform.submit("demo", {}, "7", "carol", first.attempt)
    assert rows(platform) == before


def test_unknown_problem_and_bad_user_are_refused(platform: Platform, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no problem 'nope'"):
        platform.submit("nope", {}, "42", "bob")
    platform.publish(make_problem(tmp_path, contract=ANSWER_CONTRACT), "alice")
    with pytest.raises(InvalidInput, match="not a user name"):
        platform.submit("demo", {}, "42", "bob smith")


def test_a_stage_combines_its_checks_by_mode(platform: Platform, tmp_path: Path) -> None:
    checks = [
        {"kind": "answer_contains", "value": "4", "weight": 3},
        {"kind": "answer_contains", "value": "2", "weight": 1},
    ]
    ids = set()
    for mode in ("all", "weighted"):
        contract = {
            "acceptance": "Digits.",
            "stages": [{"name": "digits", "type": "sandbox", "mode": mode, "checks": checks}],
        }
        ids.add(
            platform.publish(
                make_problem(tmp_path, problem=mode, contract=contract), "alice"
            ).contract
        )
        assert platform.submit(mode, {}, "42", "bob").status is Status.VERIFIED
        # in either mode a refutation is never outweighed
        run = platform.submit(mode, {}, "41", "bob")
        assert run.status is Status.REFUTED
        assert run.stages[0].detail.startswith("1 of 2 checks passed")
    assert len(ids) == 2  # the mode is part of the contract
