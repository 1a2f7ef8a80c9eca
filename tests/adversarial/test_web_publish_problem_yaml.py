"""A published archive whose own ``problem.yaml`` is the attack (helper "adv-webarchive"): the
archive's members are all well-formed, but the folder they make names files outside itself (an
absolute path, ``..``, ``/proc/self/environ`` as a reference, skill, statement, protocol or
conformance fixtures: the host file would be bound into the revision and served back as a
"sealed reference"), or holds a value the folder reader did not expect (a NUL in a path, a list
as a stage's type), which used to be a 500 with a traceback instead of a 422 naming the key.

Each is posted to ``POST /v1/problems`` as a manager: 422 naming the key, no traceback, nothing
published, no host file's bytes in the blob store, and the scratch folder gone."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tempfile
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assay.platform import Platform
from tests.adversarial.web_attacks import api, entries, site  # noqa: F401 (fixtures)
from tests.web.conftest import Site

HOST_FILE = Path("/etc/passwd")
SANDBOX = {"name": "s", "type": "sandbox", "checks": [{"kind": "answer_equals", "value": "1"}]}


def folder_tar(document: dict[str, object], files: dict[str, str] | None = None) -> bytes:
    """A ``.tar.gz`` of one top-level folder holding ``problem.yaml`` (JSON is YAML), the
    statement and ``files``: every member a plain file, so only problem.yaml is hostile."""
    members = {"problem.yaml": json.dumps(document), "s.md": "Solve it.", **(files or {})}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"hostile/{name}")
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def problem(**extra: object) -> dict[str, object]:
    return {"id": "hostile-yaml", "title": "T", "statement": "s.md", **extra}


def contract(**extra: object) -> dict[str, object]:
    return {"acceptance": "a", "stages": [SANDBOX], **extra}


def ref(path: str, **extra: object) -> dict[str, object]:
    return problem(contract=contract(references=[{"key": "k", "path": path, **extra}]))


HOSTILE: dict[str, tuple[dict[str, object], str]] = {
    # outside the folder: the host file would be bound into the revision and served back
    "statement-absolute": (problem(statement=str(HOST_FILE)), "statement: '/etc/passwd' must"),
    "statement-climbs": (problem(statement="../../../../../etc/passwd"), "statement: '../"),
    "skill-proc-environ": (problem(skills=["/proc/self/environ"]), "skills[0]: '/proc/self"),
    "skill-climbs": (problem(skills=["../s.md"]), "skills[0]: '../s.md' must"),
    "reference-absolute-file": (ref("/etc/passwd"), "references[0].path: '/etc/passwd' must"),
    "reference-absolute-folder": (ref("/etc"), "references[0].path: '/etc' must"),
    "reference-climbs": (ref("../.."), "references[0].path: '../..' must"),
    "reference-sealed-climbs": (
        ref("../../../etc/passwd", sealed_until="2099-01-01T00:00:00Z"),
        "references[0].path: '../../../etc/passwd' must",
    ),
    "reference-whole-folder": (ref("."), "references[0].path: '.' must"),
    "protocol-absolute": (
        problem(
            contract=contract(stages=[{"name": "r", "type": "review", "protocol": "/etc/passwd"}])
        ),
        "stages[0].protocol: '/etc/passwd' must",
    ),
    "conformance-fixtures-absolute": (
        problem(
            contract=contract(references=[{"key": "k", "path": "s.md"}], conformance={"k": "/etc"})
        ),
        "conformance.k: '/etc' must",
    ),
    "check-names-host-path": (
        problem(
            contract=contract(
                stages=[
                    {
                        "name": "s",
                        "type": "sandbox",
                        "checks": [
                            {"kind": "file_contains", "path": "/etc/passwd", "pattern": "x"}
                        ],
                    }
                ]
            )
        ),
        "'/etc/passwd' is not a role",
    ),
    # values the folder reader did not expect: each was a 500 with a traceback
    "statement-nul": (problem(statement="s.md\x00.txt"), "statement: 's.md\\x00.txt' holds a NUL"),
    "skill-nul": (problem(skills=["s.md\x00"]), "skills[0]: 's.md\\x00' holds a NUL"),
    "reference-nul": (ref("s.md\x00/x"), "references[0].path: 's.md\\x00/x' holds a NUL"),
    "protocol-nul": (
        problem(contract=contract(stages=[{"name": "r", "type": "review", "protocol": "p\x00"}])),
        "stages[0].protocol: 'p\\x00' holds a NUL",
    ),
    "fixtures-nul": (
        problem(
            contract=contract(references=[{"key": "k", "path": "s.md"}], conformance={"k": "f\x00"})
        ),
        "conformance.k: 'f\\x00' holds a NUL",
    ),
    "stage-type-list": (
        problem(contract=contract(stages=[{"name": "s", "type": ["sandbox"]}])),
        "stages[0].type: must be sandbox, review or external",
    ),
    "stage-type-mapping": (
        problem(contract=contract(stages=[{"name": "s", "type": {"sandbox": 1}}])),
        "stages[0].type: must be sandbox, review or external",
    ),
}


def left_behind(watched: Path) -> list[Path]:
    """Publishing's scratch folders still there (the platform's own work folder, made once
    when the store is opened, is not one)."""
    return [p for p in watched.iterdir() if p.name.startswith("assay-archive-")]


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Where publishing makes its scratch folder (tempfile's default folder), watched."""
    watched = tmp_path / "tmp"
    watched.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(watched))
    return watched


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_problem_yaml_is_a_422_naming_the_key_with_nothing_published(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
    scratch: Path,
    case: str,
) -> None:
    document, expected = HOSTILE[case]
    before = entries(site)
    answer = api.post(
        "/v1/problems",
        headers=site.auth("mgr"),
        files={"archive": ("p.tar.gz", folder_tar(document))},
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert expected in detail, detail
    assert "Traceback" not in answer.text and "root:" not in answer.text
    assert entries(site) == before
    assert left_behind(scratch) == []
    with Platform.open(site.config) as platform:
        sha = hashlib.sha256(HOST_FILE.read_bytes()).hexdigest()
        assert not platform.ledger.blobs.has(sha)


def test_the_same_folder_without_the_hostile_key_publishes(
    api: TestClient,  # noqa: F811
    site: Site,  # noqa: F811
    scratch: Path,
) -> None:
    """The control: the builder makes a folder that publishes, so the refusals above are about
    the hostile key and nothing else."""
    answer = api.post(
        "/v1/problems",
        headers=site.auth("mgr"),
        files={"archive": ("p.tar.gz", folder_tar(ref("s.md")))},
    )
    assert answer.status_code == 201, answer.text
    assert left_behind(scratch) == []
