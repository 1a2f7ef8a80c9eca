"""A problem folder that is wrong in any way is refused before anything is stored, with one line
per defect naming problem.yaml and the key: safe YAML only (no aliases, no duplicate keys, no
tags), no path leaving the folder (``..``, absolute, symlinks), no unknown key at any depth, and
no check naming a reference key or role the contract does not declare."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.platform import FolderInvalid, Platform, load_folder
from tests.platform.conftest import SCHEMA_CONTRACT, SCHEMA_FILES, make_problem, rows, write


def _contract(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    contract = copy.deepcopy(SCHEMA_CONTRACT)
    change(contract)
    return contract


def _check(contract: dict[str, Any]) -> dict[str, Any]:
    check: dict[str, Any] = contract["stages"][0]["checks"][0]
    return check


# (id, what to build, the key the one line must name, a word the line must hold)
DEFECTS: list[tuple[str, dict[str, Any], str, str]] = [
    ("unknown-top-key", {"colour": "red"}, "colour", "unknown key"),
    (
        "unknown-contract-key",
        {"contract": _contract(lambda c: c.update(stage=[]))},
        "contract.stage",
        "unknown key",
    ),
    (
        "unknown-role-key",
        {"contract": _contract(lambda c: c["roles"][0].update(requierd=False))},
        "contract.roles[0].requierd",
        "unknown key",
    ),
    (
        "unknown-reference-key",
        {"contract": _contract(lambda c: c["references"][0].update(sealed="2031-01-01"))},
        "contract.references[0].sealed",
        "unknown key",
    ),
    (
        "unknown-stage-key",
        {"contract": _contract(lambda c: c["stages"][0].update(mdoe="any"))},
        "contract.stages[0].mdoe",
        "unknown key",
    ),
    (
        "unknown-check-field",
        {"contract": _contract(lambda c: _check(c).update(typo=1))},
        "contract.stages[0].checks[0]",
        "typo",
    ),
    (
        "unknown-policy-key",
        {"policy": {"allowence": {"count": 1, "window_hours": 1}}},
        "policy.allowence",
        "unknown key",
    ),
    (
        "unknown-allowance-key",
        {"policy": {"allowance": {"count": 1, "window_hours": 1, "burst": 3}}},
        "policy.allowance.burst",
        "unknown key",
    ),
    (
        "unknown-release-key",
        {"policy": {"release": {"label_releas": "2031-01-01T00:00:00Z"}}},
        "policy.release.label_releas",
        "unknown key",
    ),
    (
        "undeclared-reference-key",
        {"contract": _contract(lambda c: _check(c).update(schema="answers"))},
        "contract.stages[0].checks[0]",
        "'answers' is not a reference key",
    ),
    (
        "host-path-instead-of-key",
        {"contract": _contract(lambda c: _check(c).update(schema="/etc/passwd"))},
        "contract.stages[0].checks[0]",
        "is not a reference key",
    ),
    (
        "undeclared-role",
        {"contract": _contract(lambda c: _check(c).update(artifact="report"))},
        "contract.stages[0].checks[0]",
        "'report' is not a role",
    ),
    (
        "dotdot-path",
        {"contract": _contract(lambda c: c["references"][0].update(path="../schema.json"))},
        "contract.references[0].path",
        "'..'",
    ),
    (
        "absolute-path",
        {"contract": _contract(lambda c: c["references"][0].update(path="/etc/hostname"))},
        "contract.references[0].path",
        "relative path",
    ),
    (
        "missing-reference",
        {"contract": _contract(lambda c: c["references"][0].update(path="reference/gone.json"))},
        "contract.references[0].path",
        "does not exist",
    ),
    ("missing-statement", {"statement": "nowhere.md"}, "statement", "does not exist"),
    ("missing-skill", {"skills": ["skills/how.md"]}, "skills[0]", "does not exist"),
    ("bad-id", {"id": "has space"}, "id", "not a name"),
    (
        "naive-seal-date",
        {
            "contract": _contract(
                lambda c: c["references"][0].update(sealed_until="2031-01-01T00:00:00")
            )
        },
        "contract.references[0].sealed_until",
        "timezone",
    ),
    (
        "held-without-date",
        {"policy": {"release": {"results": "held"}}},
        "policy.release",
        "score_release",
    ),
    (
        "unknown-stage-type",
        {"contract": _contract(lambda c: c["stages"][0].update(type="oracle"))},
        "contract.stages[0].type",
        "sandbox, review or external",
    ),
    (
        "unknown-kind",
        {"contract": _contract(lambda c: _check(c).update(kind="telepathy"))},
        "contract.stages[0].checks[0]",
        "unknown kind",
    ),
    (
        "role-twice",
        {"contract": _contract(lambda c: c["roles"].append({"name": "doc"}))},
        "contract",
        "'doc' is declared twice",
    ),
    (
        "zero-max-bytes",
        {"contract": _contract(lambda c: c["roles"][0].update(max_bytes=0))},
        "contract.roles[0].max_bytes",
        "greater than 0",
    ),
    (
        "rule-stage-without-schema",
        {
            "contract": _contract(
                lambda c: c["stages"].append(
                    {"name": "ext", "type": "external", "mechanism": "rule"}
                )
            )
        },
        "contract.stages[1]",
        "needs 'evidence_schema'",
    ),
    (
        "rule-stage-without-supplier",
        {
            "contract": _contract(
                lambda c: c["stages"].append(
                    {
                        "name": "ext",
                        "type": "external",
                        "mechanism": "rule",
                        "evidence_schema": {"type": "object"},
                    }
                )
            )
        },
        "contract.stages[1]",
        "needs 'supplied_by'",
    ),
    (
        "conformance-of-nothing",
        {"contract": _contract(lambda c: c.update(conformance={"judge": "fixtures"}))},
        "contract.conformance.judge",
        "neither a reference key",
    ),
]


@pytest.mark.parametrize(
    ("build", "key", "word"), [d[1:] for d in DEFECTS], ids=[d[0] for d in DEFECTS]
)
def test_each_defect_is_one_line_naming_the_file_and_key(
    tmp_path: Path, build: dict[str, Any], key: str, word: str
) -> None:
    fields = {"contract": SCHEMA_CONTRACT, "files": SCHEMA_FILES, **build}
    problem = fields.pop("id", "demo")
    folder = make_problem(tmp_path, problem="demo", **fields)
    if problem != "demo":  # the id itself is the defect
        text = (folder / "problem.yaml").read_text().replace('"demo"', f'"{problem}"', 1)
        write(folder, "problem.yaml", text)
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    assert len(caught.value.lines) == 1, caught.value.lines
    line = caught.value.lines[0]
    assert line.startswith(f"problem.yaml: {key}"), line
    assert word in line, line


def test_every_defect_is_reported_at_once(tmp_path: Path) -> None:
    def two_more(c: dict[str, Any]) -> None:
        c["references"][0]["path"] = "reference/gone.json"
        _check(c)["artifact"] = "report"

    folder = make_problem(tmp_path, contract=_contract(two_more), files=SCHEMA_FILES)
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    lines = caught.value.lines
    assert len(lines) == 2, lines
    assert any("contract.references[0].path" in x and "does not exist" in x for x in lines)
    assert any("'report' is not a role" in x for x in lines)


@pytest.mark.parametrize(
    ("text", "word"),
    [
        pytest.param("id: &a demo\ntitle: *a\nstatement: statement.md\n", "aliases", id="alias"),
        pytest.param(
            "id: demo\ntitle: T\nstatement: statement.md\ntitle: U\n",
            "'title' appears twice",
            id="duplicate-key",
        ),
        pytest.param(
            "id: demo\ntitle: T\nstatement: statement.md\ncontract:\n  acceptance: a\n"
            "  acceptance: b\n  stages: []\n",
            "'acceptance' appears twice",
            id="duplicate-nested-key",
        ),
        pytest.param(
            "id: !!python/object/apply:os.system ['touch pwned']\n", "constructor", id="python-tag"
        ),
        pytest.param("- id\n- demo\n", "must be a mapping", id="not-a-mapping"),
        pytest.param("id: [demo\n", "line", id="syntax"),
    ],
)
def test_unsafe_or_malformed_yaml_is_refused(tmp_path: Path, text: str, word: str) -> None:
    folder = tmp_path / "demo"
    write(folder, "problem.yaml", text)
    write(folder, "statement.md", "Solve it.")
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    assert len(caught.value.lines) == 1, caught.value.lines
    assert caught.value.lines[0].startswith("problem.yaml: ")
    assert word in caught.value.lines[0]
    assert not (folder / "pwned").exists()


def test_a_yaml_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    folder = tmp_path / "demo"
    write(folder, "problem.yaml", "\n".join(levels) + "\nid: demo\n")
    with pytest.raises(FolderInvalid, match="aliases"):
        load_folder(folder)


def test_not_utf8_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    write(folder, "problem.yaml", b"id: \xff\n")
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    assert caught.value.lines == ["problem.yaml: not UTF-8 (byte 4)"]


@pytest.mark.parametrize("where", ["file", "parent-folder", "statement"])
def test_symlinks_are_refused(tmp_path: Path, where: str) -> None:
    folder = make_problem(tmp_path, contract=SCHEMA_CONTRACT)
    outside = write(tmp_path, "outside/schema.json", '{"type": "object"}')
    if where == "file":
        (folder / "reference").mkdir()
        os.symlink(outside, folder / "reference" / "schema.json")
        key = "contract.references[0].path"
    elif where == "parent-folder":
        os.symlink(outside.parent, folder / "reference")
        key = "contract.references[0].path"
    else:
        write(folder, "reference/schema.json", '{"type": "object"}')
        (folder / "statement.md").unlink()
        os.symlink(outside, folder / "statement.md")
        key = "statement"
    with pytest.raises(FolderInvalid) as caught:
        load_folder(folder)
    assert len(caught.value.lines) == 1, caught.value.lines
    assert caught.value.lines[0].startswith(f"problem.yaml: {key}: ")
    assert "symbolic link" in caught.value.lines[0]


def test_a_refused_folder_stores_nothing(platform: Platform, tmp_path: Path) -> None:
    contract = _contract(lambda c: _check(c).update(schema="answers"))
    folder = make_problem(tmp_path, contract=contract, files=SCHEMA_FILES)
    with pytest.raises(FolderInvalid, match="'answers' is not a reference key"):
        platform.publish(folder, "alice")
    assert rows(platform) == 0
    blobs = tmp_path / "blobs"
    assert not blobs.exists() or not any(p.is_file() for p in blobs.rglob("*"))
