"""Attacks on the PyPI Agda's tuned runtime (``_agda_launch``, ``+RTS -A128m -O512m -RTS``).

The tuned start must change a judgment's cost, never its verdict, and nothing the candidate
writes may reach the runtime's options or the launcher. Classes tried here (real agda, bwrap):

- argument smuggling: a module name that becomes the checked file's name (``+RTS``, ``RTS``),
  a name the launcher reads (``--assay-check``, ``-RTS``), an ``OPTIONS`` pragma carrying
  runtime options: none reaches the runtime (the RTS reads only the exact word ``+RTS``, the
  launcher only its first argument, and those are assay's);
- the caller's environment (``GHCRTS``, ``PYTHONPATH``): cleared by the sandbox;
- shadowing the launcher's imports: the candidate's folders (``ctypes/``, ``agda/``) and
  ``.py`` files in the working folder do not change what ``python -I`` imports;
- cache and canary sharing: tuned and plain are separate cache keys and canary identities;
- memory: the larger nursery costs memory the sandbox counts. A memory limit the tuned command
  hits is judged again with the plain command, whose verdict stands (found by adv-agdarts: with
  ``limits_are_rules`` the tuned run *refuted* honest work the plain ``agda`` checks within the
  same ``memory_mb``; fixed in ``judge``). Without a cgroup (RLIMIT_AS only), the PyPI Agda's
  ``malloc: failed on request`` was read as a crash of the work; it is now a memory sign, which
  the re-run at larger limits confirms;
- the interaction lane, now started through the launcher, never solves a false obligation;
- the prove loop's report names how Agda was started (``toolchain.command``; it named only the
  binary before adv-agdarts).
"""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from assay import Config, Outcome, Status
from assay.proofs import JudgmentCache, agda_toolchain, judge, plan_for
from assay.proofs._agda_launch import split_rts
from assay.proofs._agda_toolchain import LAUNCHER, PYPI_RTS_OPTIONS, pypi_launcher
from assay.proofs._canary import canary_checks
from assay.proofs._fill import Judging
from assay.proofs._toolchain import Toolchain
from assay.prove._folder import prove_folder
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.test_agda import HEADER, LIMITS, PRELUDE
from tests.proofs.test_agda_runtime import STDLIB_HEADER, comm_plan

TUNED = Config(agda_toolchain="pypi", agda_tuned_runtime=True, judgment_cache="off")
PLAIN = Config(agda_toolchain="pypi", agda_tuned_runtime=False, judgment_cache="off")
LAUNCHER_WORDS = {"+RTS", "-RTS", "--RTS", "--assay-check"}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


def _tuned() -> Toolchain:
    found = agda_toolchain(TUNED)
    if found is None or pypi_launcher() is None:
        pytest.skip("the PyPI Agda is not installed (scripts/agda-toolchain)")
    if not found.launch:
        pytest.skip("the launcher does not match this installation: nothing tuned to attack")
    return found


# --- argument smuggling: what the candidate names never becomes a runtime or launcher word ---

SMUGGLED_MODULES = ["+RTS", "RTS", "-RTS", "--RTS", "+RTS.-RTS", "A.+RTS"]


@pytest.mark.parametrize("module", SMUGGLED_MODULES)
def test_a_module_name_never_becomes_a_runtime_or_launcher_word(module: str) -> None:
    """A hole obligation is checked under its own file name: ``+RTS.agda`` is not ``+RTS``
    (GHC matches the whole word), and the launcher reads only its first argument."""
    found = _tuned()
    solution = f"module {module} where\n\n{HEADER}\n\nx : Nat\nx = {{! !}}\n"
    plan = plan_for("agda", solution, stdlib=False, config=TUNED)
    step = plan.steps[0]
    assert step[: len(found.launch)] == list(found.launch)
    own = step[len(found.launch) :]
    assert not LAUNCHER_WORDS & set(own), (module, own)
    script = step.index(str(LAUNCHER))
    assert split_rts(step[script + 1 :]) == (list(PYPI_RTS_OPTIONS), own)


@pytest.mark.parametrize(
    "pragma",
    [
        "{-# OPTIONS +RTS -M1m -RTS #-}",
        "{-# OPTIONS --rts-options=-M1m #-}",
        "{-# OPTIONS --assay-check #-}",
    ],
)
@pytest.mark.slow
def test_an_options_pragma_cannot_reach_the_runtime(pragma: str, sandbox: Sandbox) -> None:
    """Agda reads ``OPTIONS`` itself (unknown ones are an error of the file): a wrong proof
    stays red and a right one is not made to fail by assay's machinery."""
    _tuned()
    for statement, could_be_green in (("1 + 1 ≡ 3", False), ("1 + 1 ≡ 2", True)):
        source = f"{pragma}\n{PRELUDE}two : {statement}\ntwo = refl\n"
        plan = dataclasses.replace(
            plan_for("agda", source, statement=statement, name="two", header=HEADER, config=TUNED),
            refusals=[],  # the scan may refuse the pragma: the toolchain must hold anyway
        )
        verdict = judge("agda", plan, sandbox, LIMITS, config=TUNED).verdict
        assert verdict is not None and not (verdict.green and not could_be_green), verdict
        assert verdict.finding in ("checks", "does_not_check"), verdict.reason


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variable", "value"),
    [("GHCRTS", "-M1m"), ("GHCRTS", "-A1k -H1k"), ("PYTHONPATH", "/nonexistent")],
)
def test_the_callers_environment_does_not_reach_the_runtime(
    variable: str, value: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox starts from an empty environment (``--clearenv``): ``GHCRTS`` (which the
    PyPI runtime reads even with its options disabled) cannot shrink the judged heap."""
    _tuned()
    monkeypatch.setenv(variable, value)
    source = f"{PRELUDE}two : 1 + 1 ≡ 2\ntwo = refl\n"
    plan = plan_for("agda", source, statement="1 + 1 ≡ 2", name="two", header=HEADER, config=TUNED)
    verdict = judge("agda", plan, sandbox, LIMITS, config=TUNED).verdict
    assert verdict is not None
    assert verdict.green and verdict.exit_code == 0, verdict.reason


# --- shadowing: the candidate's files in the working folder are not the launcher's imports ---


@pytest.mark.parametrize(
    "files",
    [
        {"ctypes/__init__.py": "raise SystemExit(7)\n"},
        {"struct.py": "raise SystemExit(7)\n", "importlib/__init__.py": "raise SystemExit(7)\n"},
        {"agda/__init__.py": "", "agda/__main__.py": "raise SystemExit(0)\n"},
        {"sitecustomize.py": "raise SystemExit(7)\n", "usercustomize.py": "raise SystemExit(7)\n"},
    ],
    ids=["ctypes", "struct_importlib", "agda_package", "sitecustomize"],
)
def test_files_in_the_work_folder_do_not_shadow_the_launcher(
    files: dict[str, str], tmp_path: Path
) -> None:
    """The judged folder is the launcher's working folder; ``-I`` keeps it off ``sys.path``
    (a solution's module path such as ``agda.Solution`` makes an ``agda/`` folder there)."""
    found = _tuned()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    python = found.launch[: found.launch.index(str(LAUNCHER)) + 1]
    check = subprocess.run(
        [*python, "--assay-check"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (check.returncode, check.stdout.strip()) == (0, "ok"), check.stderr


# --- cache and canary: tuned and plain never share an entry ---


@pytest.mark.slow
def test_tuned_and_plain_never_share_a_cache_entry(sandbox: Sandbox, tmp_path: Path) -> None:
    """A verdict cached under one command is not served for the other."""
    _tuned()
    cache = JudgmentCache(tmp_path / "cache")
    source = f"{PRELUDE}two : 1 + 1 ≡ 2\ntwo = refl\n"
    plans = {
        name: plan_for(
            "agda", source, statement="1 + 1 ≡ 2", name="two", header=HEADER, config=config
        )
        for name, config in (("tuned", TUNED), ("plain", PLAIN))
    }
    assert plans["tuned"].steps != plans["plain"].steps
    first = judge("agda", plans["tuned"], sandbox, LIMITS, cache, config=TUNED).verdict
    assert first is not None and first.green
    served = judge("agda", plans["plain"], sandbox, LIMITS, cache, config=PLAIN).verdict
    assert served is not None and served.green
    assert served.command != first.command and "+RTS" not in served.command
    again = judge("agda", plans["tuned"], sandbox, LIMITS, cache, config=TUNED).verdict
    assert again is not None  # the tuned entry is the tuned verdict, not the plain one
    assert (again.command, again.steps, again.green) == (first.command, first.steps, True)
    assert canary_checks("agda", _tuned(), sandbox, LIMITS)


# --- memory: the nursery is assay's cost, never the work's ---

SMALL_MB = 200
"""Below the tuned runtime's need on a ``Data.Nat.Properties`` judgment, above the plain one's
(measured in the sandbox here: tuned stopped at 200 MiB, checks at 260; plain checks at 200)."""


def _stdlib_proof(tmp_path: Path, config: Config, *, rules: bool, green: bool) -> Outcome:
    arguments = "m n" if green else "n m"
    ws = tmp_path / f"ws-{config.agda_tuned_runtime}-{rules}-{green}"
    ws.mkdir()
    (ws / "Solution.agda").write_text(
        f"module Solution where\n\n{STDLIB_HEADER}\nimport Data.Nat.Properties\n\n"
        f"comm : ∀ (m n : ℕ) → m + n ≡ n + m\ncomm m n = Data.Nat.Properties.+-comm {arguments}\n"
    )
    return run_kind(
        "agda",
        file="Solution.agda",
        statement="∀ (m n : ℕ) → m + n ≡ n + m",
        name="comm",
        header=STDLIB_HEADER,
        memory_mb=SMALL_MB,
        timeout=240,
        limits_are_rules=rules,
        workspace=ws,
        config=config,
    )


@pytest.mark.slow
@pytest.mark.parametrize("green", [True, False], ids=["honest", "wrong"])
def test_a_tuned_memory_overflow_never_decides(green: bool, tmp_path: Path) -> None:
    """The nursery is assay's choice: a memory limit the tuned command hits is judged again
    with the plain command, whose verdict stands (honest: verified, wrong: refuted, here where
    the plain agda fits in the limit), and whose command the outcome names."""
    _tuned()
    if Sandbox(backend="bwrap").memory_limit == "rlimit-as":
        pytest.skip("no cgroup here: the nursery's reserved pages are not what RLIMIT_AS counts")
    plain = _stdlib_proof(tmp_path, PLAIN, rules=False, green=green)
    if plain.status is Status.INCONCLUSIVE:
        pytest.skip(f"the plain agda does not fit in {SMALL_MB} MiB here: nothing to compare")
    tuned = _stdlib_proof(tmp_path, TUNED, rules=False, green=green)
    assert tuned.status is plain.status, (tuned.detail, plain.detail)
    assert tuned.status is (Status.VERIFIED if green else Status.REFUTED), tuned.detail


@pytest.mark.slow
def test_the_nursery_never_refutes_honest_work_under_limits_as_rules(tmp_path: Path) -> None:
    _tuned()
    if Sandbox(backend="bwrap").memory_limit == "rlimit-as":
        pytest.skip("no cgroup here: the nursery's reserved pages are not what RLIMIT_AS counts")
    plain = _stdlib_proof(tmp_path, PLAIN, rules=True, green=True)
    if plain.status is not Status.VERIFIED:
        pytest.skip(f"the plain agda does not fit in {SMALL_MB} MiB here: nothing to compare")
    tuned = _stdlib_proof(tmp_path, TUNED, rules=True, green=True)
    assert tuned.status is not Status.REFUTED, tuned.detail


@pytest.mark.slow
@pytest.mark.parametrize("config", [TUNED, PLAIN], ids=["tuned", "plain"])
def test_an_address_space_limit_is_not_a_crash_of_the_work(config: Config) -> None:
    _tuned()
    rlimit_only = Sandbox(backend="bwrap", cgroups=False)
    plan = comm_plan("m n", config)
    limits = Limits(timeout=240, memory_mb=1024)
    verdict = judge("agda", plan, rlimit_only, limits, config=config).verdict
    assert verdict is not None
    assert verdict.green or verdict.limit == "memory", (verdict.finding, verdict.reason)


# --- the prove loop's report: which Agda, and how it was started ---


@pytest.mark.slow
def test_the_prove_report_names_how_agda_was_started(tmp_path: Path) -> None:
    found = _tuned()
    (tmp_path / "Two.agda").write_text(
        f"module Two where\n\n{HEADER}\n\ntwo : 1 + 1 ≡ 2\ntwo = {{! !}}\n"
    )
    report = prove_folder(tmp_path, Judging(Sandbox(backend="bwrap"), config=TUNED))
    assert report.solved == 1, report.obligations
    recorded = str(report.toolchain)
    assert report.toolchain["binary"] == found.binary
    assert all(word in recorded for word in (*PYPI_RTS_OPTIONS, str(LAUNCHER)))


@pytest.mark.slow
def test_the_lane_through_the_launcher_never_solves_a_false_obligation(tmp_path: Path) -> None:
    """The interaction lane (now started through the launcher) only proposes and prunes; what
    is solved is what the judge verdicts: a false statement stays unsolved, not an error."""
    _tuned()
    for name, statement in (("Three", "1 + 1 ≡ 3"), ("Zero", "1 ≡ 0")):
        (tmp_path / f"{name}.agda").write_text(
            f"module {name} where\n\n{HEADER}\n\nx : {statement}\nx = {{! !}}\n"
        )
    report = prove_folder(tmp_path, Judging(Sandbox(backend="bwrap"), config=TUNED))
    assert report.solved == 0 and report.total == 2, report.obligations
    assert all(row.status == "unsolved" for row in report.obligations), report.obligations


def test_the_launcher_runs_isolated_by_the_package_scripts_python() -> None:
    """The launch names the interpreter of the ``agda`` script, ``-I -S`` and the launcher, so
    the verdict's command re-runs outside assay with the same Python and options (``-S``: no
    ``site``; the launcher finds the package itself)."""
    found = _tuned()
    launcher = pypi_launcher()
    assert launcher is not None
    shebang = launcher.read_text().splitlines()[0].removeprefix("#!")
    assert found.launch[:4] == (shebang, "-I", "-S", str(LAUNCHER))
    assert found.launch[4:] == ("+RTS", *PYPI_RTS_OPTIONS, "-RTS")
