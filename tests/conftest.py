"""Session-wide test environment: private caches, and which tools each test needs.

Private caches: a cache folder and a signing key of the session's own, so no verdict from an
earlier run (or another project on this machine) can make a test pass without judging, and no
test touches the user's key.

Tool markers (``bwrap``, ``agda``, ``coq``, ``lean``, ``postgres``; registered in pyproject.toml)
are set here,
at collection, so a contributor can run what their machine supports::

    pytest -m "not agda and not coq"

A test gets a proof tool's marker when the tool's name is a word of its node id (file, test
name, parameter ids), of its parameter values, of its own source (``need("agda")``,
``"Sym.agda"``) or, for a test run over task files, of its task (an example naming its kind),
or when its node id is listed in ``NODE_NEEDS``. Every proof test also gets
``bwrap`` (proofs are judged in the sandbox), and so does every test of a module that runs code
in the sandbox (``SANDBOXED`` matches its source). A test can also carry a marker explicitly.
The rules over-mark rather than miss: a test that needs a tool and is not marked still fails
where the tool is missing (it never passes or skips silently).

``./scripts/test`` sets ``ASSAY_REQUIRE_TOOLS=1``: the session then stops before the first test
when a tool that a selected test needs is missing (bubblewrap, Agda with agda-stdlib, Coq,
PostgreSQL). Lean is the exception: it cannot be installed on these machines, so its tests skip
with their reason. Without ``ASSAY_REQUIRE_TOOLS=1`` a test that needs PostgreSQL skips, saying
why, when it is not installed.

PostgreSQL: ``postgres_cluster`` starts one throwaway cluster per session (``initdb`` into a temp
folder, as the ``postgres`` user when the tests run as root, since postgres refuses root;
listening on 127.0.0.1 only, on a free port, its socket in that folder, ``fsync=off``), and
stops it and removes the folder at the end, also when tests fail. ``db_url`` gives each test a
fresh, empty store URL, once per database (``sqlite``, ``postgresql``: a new database in the
cluster); a test that uses it, or the cluster, gets the ``postgres`` marker for its PostgreSQL
run.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import inspect
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ledger.cluster import ClusterFailed, postgres_bindir, throwaway_cluster

TOOLS = ("bwrap", "agda", "coq", "lean", "postgres")
PROOF_TOOLS = ("agda", "coq", "lean")
REQUIRED = ("bwrap", "agda", "coq", "postgres")
"""Tools that ``ASSAY_REQUIRE_TOOLS=1`` (./scripts/test) demands; Lean's tests skip instead."""
WORD = re.compile(r"(?<![A-Za-z])(?i:(agda|coqc|coqchk|coq|lean|lake))(?![a-z])")
"""A proof tool's name (or binary) as a word: ``Sym.agda``, ``AgdaLane``, ``need("coqc")``;
not ``clean``."""
TOOL_OF = {
    "agda": "agda",
    "coq": "coq",
    "coqc": "coq",
    "coqchk": "coq",
    "lean": "lean",
    "lake": "lean",
}
SANDBOXED = re.compile(
    r"Sandbox\(|sandbox\(\)|code_checks|check_task|EXAMPLES|"
    r"[\"'](python|shell|program|hidden_python|python_unittest)[\"']"
)
"""Source of a module whose tests run code in the sandbox (a sandbox, a code-running kind, the
bundled examples)."""
NODE_NEEDS = {
    "tests/sandbox/*": {"bwrap"},
    "tests/proofs/test_lane.py::*": {"agda"},
    "tests/adversarial/test_lane_*": {"agda"},
    "tests/adversarial/test_hole_*": {"agda"},
    "tests/test_benchmarks.py::test_sandbox_*": {"bwrap"},
    "tests/test_benchmarks.py::test_proofs_*": {"agda"},
}
"""Tests whose need shows in neither their names nor their sources, by node id pattern."""


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's own ``XDG_CACHE_HOME`` and ``XDG_CONFIG_HOME`` (so its own signing key)."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    config = tmp_path_factory.mktemp("xdg-config")
    previous = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    os.environ["XDG_CACHE_HOME"] = str(folder)
    os.environ["XDG_CONFIG_HOME"] = str(config)
    yield folder
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def missing(tool: str) -> str | None:
    """Why ``tool`` cannot be used on this machine, or None when it can."""
    if tool == "agda":
        if shutil.which("agda") is None:
            return "agda is not installed"
        from assay import Config

        stdlib = Config.from_env().agda_stdlib
        return None if Path(stdlib).is_dir() else f"agda-stdlib is not installed at {stdlib}"
    if tool == "postgres":
        return None if postgres_bindir() else "PostgreSQL (initdb, pg_ctl) is not installed"
    binary = {"bwrap": "bwrap", "coq": "coqc", "lean": "lake"}[tool]
    return None if shutil.which(binary) else f"{binary} is not installed"


@functools.cache
def _file_text(path: Path) -> str:
    """A test module's source, or a parameter's file (a task the test runs), read once."""
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""


def needs(item: pytest.Item) -> set[str]:
    """The tools ``item`` needs (see the module docstring)."""
    found = {mark.name for mark in item.iter_markers() if mark.name in TOOLS}
    texts = [item.nodeid]
    params = getattr(getattr(item, "callspec", None), "params", {})
    texts.append(repr(params))
    tasks = [v for v in params.values() if isinstance(v, Path) and v.suffix == ".json"]
    if tasks:  # a test run over task files needs what its task needs, not what its siblings do
        texts += [_file_text(task) for task in tasks]
    elif (function := getattr(item, "function", None)) is not None:
        with contextlib.suppress(OSError, TypeError):
            texts.append(inspect.getsource(function))
    found |= {TOOL_OF[word.lower()] for text in texts for word in WORD.findall(text)}
    if params.get("db_url") == "postgresql" or "postgres_cluster" in getattr(
        item, "fixturenames", ()
    ):
        found.add("postgres")
    for pattern, tools in NODE_NEEDS.items():
        if fnmatch.fnmatchcase(item.nodeid, pattern):
            found |= tools
    path = item.path
    if found & set(PROOF_TOOLS) or (path.suffix == ".py" and SANDBOXED.search(_file_text(path))):
        found.add("bwrap")
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for tool in sorted(needs(item)):
            item.add_marker(getattr(pytest.mark, tool))


def pytest_collection_finish(session: pytest.Session) -> None:
    """With ``ASSAY_REQUIRE_TOOLS=1`` (./scripts/test), stop before the first test when a tool
    that a selected test needs is missing: a machine without it must not look green."""
    if os.environ.get("ASSAY_REQUIRE_TOOLS") != "1":
        return
    wanted = {tool for item in session.items for tool in needs(item)} & set(REQUIRED)
    reasons = [f"{tool}: {why}" for tool in sorted(wanted) if (why := missing(tool))]
    if reasons:
        pytest.exit(
            "ASSAY_REQUIRE_TOOLS=1 and a required tool is missing ("
            + "; ".join(reasons)
            + "): run ./scripts/setup, or deselect its tests with -m 'not <tool>'",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


def pytest_report_header() -> str:
    """Which tools this machine has, at the top of every run."""
    found = []
    for tool in TOOLS:
        why = missing(tool)
        if why is None:
            found.append(f"{tool} ok")
        else:
            found.append(f"{tool} MISSING ({why}{'; its tests skip' * (tool == 'lean')})")
    return "assay tools: " + ", ".join(found) + "; deselect a missing one with -m 'not <tool>'"


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[str]:
    """A running throwaway PostgreSQL cluster for the session (``tests/ledger/cluster.py``);
    yields its server URL (no database). Skips, naming why, when PostgreSQL is not installed."""
    if why := missing("postgres"):
        pytest.skip(f"postgres: {why}")
    try:
        with throwaway_cluster() as server:
            yield server
    except ClusterFailed as exc:
        pytest.fail(f"postgres: {exc}")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store URL: a new SQLite file, or a new database in the session's
    PostgreSQL cluster (dropped afterwards)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/ledger.db"
        return
    import psycopg

    server = request.getfixturevalue("postgres_cluster")
    plain = server.replace("postgresql+psycopg://", "postgresql://")
    name = f"assay_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(f"{plain}/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield f"{server}/{name}"
    with psycopg.connect(f"{plain}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
