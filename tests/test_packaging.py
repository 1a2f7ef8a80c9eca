"""A built package works: the wheel holds everything assay reads at run time, and installed into a
fresh virtualenv outside the checkout it runs the bundled examples as the checkout does.

Offline by design: the wheel is built with the setuptools of this environment (``setuptools>=77``
is in the dev extras; no build isolation, no index), and the fresh environment gets the wheel
plus a copy of exactly the installed distributions its declared dependencies name (transitively,
markers evaluated), nothing else. So a dependency the code imports but the metadata does not
declare fails here, as it would for a user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "assay"
EXAMPLES = ROOT / "examples"
SOURCE_FILES = ("pyproject.toml", "README.md")
"""What the build reads besides ``src/`` (the readme is the package's long description)."""


def _run(argv: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kwargs
    )


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a clean copy of the checkout's sources (an in-tree build would
    leave ``build/`` behind and could pack stale files from it)."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCE_FILES:
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "src",
        source / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    dist = tmp_path_factory.mktemp("dist")
    _ok(
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--wheel-dir",
                str(dist),
                str(source),
            ],
            cwd=source,
        )
    )
    (built,) = dist.glob("assay-*.whl")
    return built


def test_the_wheel_holds_every_file_of_the_package(wheel: Path) -> None:
    """Every file under src/assay (the checker protocol's schemas, py.typed, ...) is packed."""
    with zipfile.ZipFile(wheel) as archive:
        packed = set(archive.namelist())
    expected = {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert "assay/sandbox/schemas/result.schema.json" in expected
    assert sorted(expected - packed) == []


def _requirements(text: str) -> list[Requirement]:
    """The requirements that apply here, without extras."""
    found = []
    for line in Parser().parsestr(text).get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


def _closure(wheel: Path) -> list[metadata.Distribution]:
    """The installed distributions that the wheel's dependencies name, transitively."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        pending = _requirements(archive.read(name).decode())
    seen: dict[str, metadata.Distribution] = {}
    while pending:
        requirement = pending.pop()
        key = canonicalize_name(requirement.name)
        if key in seen:
            continue
        distribution = metadata.distribution(requirement.name)
        assert requirement.specifier.contains(distribution.version, prereleases=True), (
            f"{requirement} is not satisfied by the installed {distribution.version}"
        )
        seen[key] = distribution
        pending += _requirements(distribution.read_text("METADATA") or "")
    return list(seen.values())


def _copy_installed(distribution: metadata.Distribution, site: Path) -> None:
    """Copy one installed distribution's top-level files and folders into ``site``."""
    base = Path(str(distribution.locate_file("")))
    tops = {Path(str(f)).parts[0] for f in distribution.files or []}
    for top in sorted(tops - {"..", "__pycache__"}):
        source = base / top
        if source.is_dir():
            shutil.copytree(
                source, site / top, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
            )
        elif source.is_file():
            shutil.copy2(source, site / top)


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the checkout: the wheel, and its dependencies, nothing else."""
    root = tmp_path_factory.mktemp("venv")
    assert not root.resolve().is_relative_to(ROOT)
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", str(root)], cwd=root))
    python = root / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    _ok(_run([*pip, "install", "--no-deps", "--no-index", "--quiet", str(wheel)], cwd=root))
    site = Path(
        _ok(
            _run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], root
            )
        ).strip()
    )
    for distribution in _closure(wheel):
        _copy_installed(distribution, site)
    _ok(_run([*pip, "check"], cwd=root))
    return root


def test_assay_is_imported_from_the_fresh_environment(venv: Path, tmp_path: Path) -> None:
    found = _ok(
        _run([str(venv / "bin" / "python"), "-c", "import assay; print(assay.__file__)"], tmp_path)
    )
    where = Path(found.strip()).resolve()
    assert where.is_relative_to(venv.resolve() / "lib"), where
    assert "site-packages" in where.parts
    assert not where.is_relative_to(ROOT)


def _expected(task: Path) -> str:
    """The status an example is labelled with (as tests/test_examples.py checks it in place)."""
    if task.parent.name == "hacks":
        return "refuted"
    if task.stem == "lean" and shutil.which("lake") is None:
        return "inconclusive"  # Lean cannot be installed on these machines
    return "verified"


def test_the_installed_assay_runs_every_bundled_example(venv: Path, tmp_path: Path) -> None:
    """``assay check`` from the fresh environment, run outside the checkout on a copy of
    examples/, gives every example the status it is labelled with."""
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples, symlinks=True)
    tasks = sorted(examples.glob("*.json")) + sorted((examples / "hacks").glob("*.json"))
    assert len(tasks) > 20
    relative = [str(t.relative_to(tmp_path)) for t in tasks]
    result = _run([str(venv / "bin" / "assay"), "check", *relative], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    got = {row["task"]: row["status"] for row in rows}
    expected = {name: _expected(tmp_path / name) for name in relative}
    assert got == expected, [row for row in rows if row["status"] != expected.get(row["task"])]
