"""Shared by the platform's tests: small problem folders built in ``tmp_path``, a platform over a
fresh store (SQLite and PostgreSQL, through ``db_url``) and a clock the test moves by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from assay import Config
from assay.ledger import Ledger
from assay.platform import Platform

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
"""Every test's clock starts here (far from the wall clock, so a test that used the wall clock
by mistake would show it)."""

ASSAY = Path(sys.executable).with_name("assay")

ANSWER_CONTRACT: dict[str, Any] = {
    "acceptance": "The answer is 42.",
    "stages": [
        {"name": "answer", "type": "sandbox", "checks": [{"kind": "answer_equals", "value": "42"}]}
    ],
}
"""A contract judged on the summary alone: fast, no sandbox, no files."""

SCHEMA = {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}}

SCHEMA_CONTRACT: dict[str, Any] = {
    "roles": [{"name": "doc", "required": True, "max_bytes": 1000}],
    "references": [{"key": "schema", "path": "reference/schema.json"}],
    "acceptance": "The document meets the schema.",
    "stages": [
        {
            "name": "shape",
            "type": "sandbox",
            "checks": [{"kind": "json_schema", "artifact": "doc", "schema": "schema"}],
        }
    ],
}
"""A contract over one artifact and one reference (the schema)."""

SCHEMA_FILES = {"reference/schema.json": json.dumps(SCHEMA)}

PROTOCOL: dict[str, Any] = {
    "nodes": {
        "panel": {
            "type": "review",
            "seats": 1,
            "eligible": {"group": "reviewers"},
            "rubric": "Judge the work.",
            "response_schema": {
                "type": "object",
                "required": ["verdict"],
                "properties": {"verdict": {"enum": ["pass", "fail", "uncertain"]}},
            },
        },
        "vote": {"type": "reduce", "op": "m_of_n", "inputs": ["panel"], "m": 1, "final": True},
    }
}
"""The smallest review protocol: one reviewer decides (given inline in a review stage)."""


class Clock:
    """A clock the test moves: ``Platform(..., clock=clock)``."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def make_problem(
    root: Path,
    *,
    problem: str = "demo",
    contract: dict[str, Any] | None = None,
    policy: dict[str, Any] | None = None,
    files: Mapping[str, str | bytes] | None = None,
    statement_text: str = "Solve it.",
    **extra: Any,
) -> Path:
    """A problem folder at ``root/problem`` (problem.yaml written as JSON, which is YAML)."""
    folder = root / problem
    folder.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "id": problem,
        "title": f"The {problem} problem",
        "statement": "statement.md",
    }
    if contract is not None:
        document["contract"] = contract
    if policy is not None:
        document["policy"] = policy
    document.update(extra)
    write(folder, "problem.yaml", json.dumps(document, indent=1))
    write(folder, "statement.md", statement_text)
    for name, content in (files or {}).items():
        write(folder, name, content)
    return folder


def rule_contract(
    binds: list[dict[str, Any]] | None,
    *,
    schema: dict[str, Any] | None = None,
    notes: bool = False,
    references: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A contract whose one stage is the rule stage ``bench`` (supplier ``operator``) over a
    required ``entry`` (and an optional ``notes`` when asked), its evidence bound by ``binds``
    (None: no binds key at all, as contracts were before binds)."""
    roles = [{"name": "entry", "required": True}]
    if notes:
        roles.append({"name": "notes", "required": False})
    stage: dict[str, Any] = {
        "name": "bench",
        "type": "external",
        "mechanism": "rule",
        "evidence_schema": schema or {"type": "object"},
        "supplied_by": ["operator"],
    }
    if binds is not None:
        stage["binds"] = binds
    contract: dict[str, Any] = {
        "acceptance": "The report is about this entry.",
        "roles": roles,
        "stages": [stage],
    }
    if references is not None:
        contract["references"] = references
    return contract


def write(folder: Path, name: str, content: str | bytes) -> Path:
    """Write ``folder/name`` (parents made)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def artifact(tmp_path: Path, name: str, content: str | bytes) -> Path:
    """A submitted file outside any problem folder."""
    return write(tmp_path / "work", name, content)


def rows(platform: Platform) -> int:
    """History rows in the platform's ledger."""
    return len(platform.ledger.find())


def dump(document: Any) -> str:
    """A view as the JSON a participant would read (``--json``)."""
    return json.dumps(document.to_json() if hasattr(document, "to_json") else document)


@pytest.fixture
def config(db_url: str, tmp_path: Path) -> Config:
    """A fresh store (SQLite or PostgreSQL) with its blobs in this test's folder."""
    return Config(db=db_url, blobs=str(tmp_path / "blobs"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def platform(config: Config, clock: Clock) -> Iterator[Platform]:
    """A platform over the fresh store, on the test's clock."""
    with Platform(Ledger.open(config), config, clock=clock) as opened:
        yield opened


def _env(db: str, user: str) -> dict[str, str]:
    return {**os.environ, "ASSAY_DB": db, "ASSAY_USER": user}


def cli(
    *args: str,
    db: str,
    cwd: Path,
    user: str = "alice",
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """The real ``assay`` command against store ``db``, as ``user``."""
    return subprocess.run(
        [str(ASSAY), *args],
        cwd=cwd,
        env=_env(db, user),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cli_many(
    commands: list[list[str]], *, db: str, cwd: Path, user: str = "alice", timeout: float = 180
) -> list[subprocess.CompletedProcess[str]]:
    """Several independent ``assay`` commands at once (each is a slow new process), in order."""
    started = [
        (
            args,
            subprocess.Popen(
                [str(ASSAY), *args],
                cwd=cwd,
                env=_env(db, user),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        )
        for args in commands
    ]
    done = []
    for args, process in started:
        out, err = process.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess([str(ASSAY), *args], process.returncode, out, err))
    return done
