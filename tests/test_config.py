"""One configuration object: ``Config.from_env`` reads it, and what it says reaches every place
that a limit or a folder rules (issue 8, item 4)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, InvalidInput, Status, build_check
from assay.sandbox import Sandbox
from tests.helpers import run_kind

ROOT = Path(__file__).resolve().parents[1]
CATASTROPHIC = r"^(a|aa)+$"
"""Backtracks exponentially on a run of a's that ends in another letter."""
SLOW_TEXT = "a" * 40 + "b"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No ``ASSAY_*`` variable from the caller's environment."""
    for name in list(os.environ):
        if name.startswith("ASSAY_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_from_env_without_variables_is_the_default(clean_env: pytest.MonkeyPatch) -> None:
    assert Config.from_env() == Config()


def test_from_env_reads_every_field(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    values = {
        "REGEX_TIMEOUT": "2.5",
        "SQL_TIMEOUT": "7",
        "SQL_MAX_ROWS": "10",
        "MAX_FILE_BYTES": "1024",
        "MAX_STAGED_MB": "3",
        "JUDGMENT_CACHE": str(tmp_path / "judgments"),
        "CACHE_HOME": str(tmp_path / "home"),
        "KEY_FILE": str(tmp_path / "key"),
        "AGDA_STDLIB": str(tmp_path / "stdlib"),
        "AGDA_TOOLCHAIN": "pypi",
        "AGDA_TUNED_RUNTIME": "false",
        "AGDA_PYPI_STDLIB": str(tmp_path / "pypi-stdlib"),
        "LEAN_PROJECT": str(tmp_path / "lean"),
        "ALLOW_UNISOLATED": "true",
        "CGROUP_PARENT": "self",
        "SANDBOX_PYTHON": "/usr/bin/python3.11",
        "SANDBOX_ZYGOTE": "false",
        "DB": f"sqlite:///{tmp_path}/ledger.db",
        "BLOBS": str(tmp_path / "blobs"),
    }
    assert {f"ASSAY_{name.upper()}" for name in Config.model_fields} == {
        f"ASSAY_{name}" for name in values
    }, "a new Config field needs a case here"
    for name, value in values.items():
        clean_env.setenv(f"ASSAY_{name}", value)
    config = Config.from_env()
    assert config.model_dump() == {
        "regex_timeout": 2.5,
        "sql_timeout": 7.0,
        "sql_max_rows": 10,
        "max_file_bytes": 1024,
        "max_staged_mb": 3,
        "judgment_cache": str(tmp_path / "judgments"),
        "cache_home": str(tmp_path / "home"),
        "key_file": str(tmp_path / "key"),
        "agda_stdlib": str(tmp_path / "stdlib"),
        "agda_toolchain": "pypi",
        "agda_tuned_runtime": False,
        "agda_pypi_stdlib": str(tmp_path / "pypi-stdlib"),
        "lean_project": str(tmp_path / "lean"),
        "allow_unisolated": True,
        "cgroup_parent": "self",
        "sandbox_python": "/usr/bin/python3.11",
        "sandbox_zygote": False,
        "db": f"sqlite:///{tmp_path}/ledger.db",
        "blobs": str(tmp_path / "blobs"),
    }


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REGEX_TIMEOUT", "0"),
        ("REGEX_TIMEOUT", "fast"),
        ("SQL_TIMEOUT", "-1"),
        ("SQL_MAX_ROWS", "1.5"),
        ("MAX_FILE_BYTES", "0"),
        ("MAX_STAGED_MB", "lots"),
        ("ALLOW_UNISOLATED", "maybe"),
        ("CGROUP_PARENT", "../escape"),
        ("AGDA_STDLIB", "agda-stdlib"),
    ],
)
def test_a_bad_value_names_its_variable(
    clean_env: pytest.MonkeyPatch, name: str, value: str
) -> None:
    clean_env.setenv(f"ASSAY_{name}", value)
    with pytest.raises(InvalidInput) as raised:
        Config.from_env()
    assert raised.value.where == f"ASSAY_{name}"
    assert str(raised.value).startswith(f"ASSAY_{name}: ")


def test_judgments_folder(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Config().judgments_folder() == tmp_path / "xdg" / "assay" / "judgments"
    assert Config(cache_home=str(tmp_path / "h")).judgments_folder() == tmp_path / "h" / "judgments"
    assert Config(judgment_cache=str(tmp_path / "j")).judgments_folder() == tmp_path / "j"
    assert Config(judgment_cache="off", cache_home=str(tmp_path)).judgments_folder() is None
    clean_env.delenv("XDG_CACHE_HOME")
    clean_env.setenv("HOME", str(tmp_path / "user"))
    assert Config().judgments_folder() == tmp_path / "user" / ".cache" / "assay" / "judgments"


def test_signing_key_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert Config().signing_key_file() == tmp_path / "xdg" / "assay" / "cache.key"
    assert Config(key_file=str(tmp_path / "k")).signing_key_file() == tmp_path / "k"
    clean_env.delenv("XDG_CONFIG_HOME")
    clean_env.setenv("HOME", str(tmp_path / "user"))
    assert Config().signing_key_file() == tmp_path / "user" / ".config" / "assay" / "cache.key"


# What the config says reaches the checks: the regex time limit.


@pytest.mark.parametrize("kind", ["answer_regex", "file_contains"])
def test_the_regex_timeout_rules_pattern_checks(tmp_path: Path, kind: str) -> None:
    (tmp_path / "out.txt").write_text(SLOW_TEXT)
    spec: dict[str, Any] = {"pattern": CATASTROPHIC}
    if kind == "file_contains":
        spec["path"] = "out.txt"
    config = Config(regex_timeout=0.02)
    outcome = run_kind(kind, answer=SLOW_TEXT, workspace=tmp_path, config=config, **spec)
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
    assert "within 0.02s" in outcome.detail


def test_the_regex_timeout_rules_the_output_pattern_of_code_checks(tmp_path: Path) -> None:
    check = build_check(
        {"kind": "shell", "code": f"echo {SLOW_TEXT}", "pattern": CATASTROPHIC, "timeout": 20}
    )
    ctx = CheckContext(
        workspace=tmp_path, sandbox=Sandbox(backend="bwrap"), config=Config(regex_timeout=0.02)
    )
    outcome = check.run(ctx)
    assert outcome.status is Status.INCONCLUSIVE, outcome.detail
    assert "within 0.02s" in outcome.detail


# The staging cap.


def _big_fixtures(root: Path) -> Path:
    """A checker outside a fixture set of two fixtures, one holding a 2 MiB artifact."""
    fixtures = root / "fixtures"
    for name, result in (("yes", "verified"), ("no", "refuted")):
        (fixtures / name / "artifacts" / "answer").mkdir(parents=True)
        (fixtures / name / "expected.json").write_text(json.dumps({"result": result}))
    (fixtures / "yes" / "artifacts" / "answer" / "a.txt").write_bytes(b"y" * (2 << 20))
    (fixtures / "no" / "artifacts" / "answer" / "a.txt").write_text("n")
    return fixtures


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=120,
    )


def test_checker_conform_takes_its_staging_cap_from_the_environment(tmp_path: Path) -> None:
    checker = tmp_path / "check.py"
    checker.write_text("raise SystemExit(1)\n")
    fixtures = _big_fixtures(tmp_path)
    refused = _cli("checker", "conform", str(checker), str(fixtures), ASSAY_MAX_STAGED_MB="1")
    assert refused.returncode == 2, refused.stderr
    assert "larger than 1 MiB" in refused.stderr
    bad = _cli("checker", "conform", str(checker), str(fixtures), ASSAY_MAX_STAGED_MB="0")
    assert bad.returncode == 2
    assert "ASSAY_MAX_STAGED_MB" in bad.stderr
    assert "Traceback" not in refused.stderr + bad.stderr


def test_the_program_kind_takes_its_staging_cap_from_the_config(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.bin").write_bytes(b"x" * (2 << 20))
    (tmp_path / "check.py").write_text("raise SystemExit(1)\n")
    spec = {"checker": "check.py", "artifacts": {"answer": "big.bin"}}
    small = run_kind(
        "program", workspace=workspace, base_dir=tmp_path, config=Config(max_staged_mb=1), **spec
    )
    assert small.status is Status.REFUTED
    assert "larger than the 1 MiB staging limit" in small.detail


# The judgments folder and the signing key.

CHECKER = """\
import json, pathlib
answer = next(pathlib.Path("/input/artifacts/answer").rglob("*")).read_text().strip()
result = "verified" if answer == "yes" else "refuted"
pathlib.Path("/output/result.json").write_text(json.dumps({"result": result, "summary": answer}))
"""


@pytest.mark.slow
def test_the_program_kind_caches_conformance_where_the_config_says(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    for name in ("yes", "no"):
        (fixtures / name / "artifacts" / "answer").mkdir(parents=True)
        (fixtures / name / "artifacts" / "answer" / "a.txt").write_text(name)
        verdict = "verified" if name == "yes" else "refuted"
        (fixtures / name / "expected.json").write_text(json.dumps({"result": verdict}))
    (tmp_path / "check.py").write_text(CHECKER)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("yes")
    folder, key = tmp_path / "judgments", tmp_path / "keys" / "signing.key"
    config = Config(judgment_cache=str(folder), key_file=str(key))
    check = build_check(
        {
            "kind": "program",
            "checker": "check.py",
            "fixtures": "fixtures",
            "artifacts": {"answer": "answer.txt"},
        }
    )
    ctx = CheckContext(
        workspace=workspace, base_dir=tmp_path, sandbox=Sandbox(backend="bwrap"), config=config
    )
    first = check.run(ctx)
    assert first.status is Status.VERIFIED, first.detail
    assert first.evidence["conformance"]["cached"] is False
    assert list((folder / "conformance").rglob("*.json")), "nothing cached in the config's folder"
    assert key.is_file()
    second = check.run(ctx)
    assert second.evidence["conformance"]["cached"] is True
    off = check.run(dataclasses.replace(ctx, config=Config(judgment_cache="off")))
    assert off.evidence["conformance"]["cached"] is False
