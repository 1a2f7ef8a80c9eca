"""Agda's tuned runtime options change a judgment's cost, never its verdict (real agda, no mocks).

The PyPI Agda is started by ``_agda_launch`` with ``+RTS`` options its own script cannot pass
(Debian's gets none: they did not measurably help it). Here: the launcher falls back to the plain
script when
the installation is not what it expects; tuned and plain judgments agree on the cheat corpus,
the canaries and a green and a red proof; the options are in the verdict's command, which
re-runs outside assay to the same exit code.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay._config import Config
from assay.proofs import Plan, agda_toolchain, judge, plan_for
from assay.proofs._agda_launch import CONFIG_SIZE, CONFIG_SYMBOL, split_rts, symbol_size
from assay.proofs._agda_toolchain import LAUNCHER, PYPI_RTS_OPTIONS, pypi_launch, pypi_launcher
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Sandbox
from tests.proofs.test_agda import CANARIES, CHEATS, HEADER, LIMITS, _plan

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
RED = "two : 1 + 1 ≡ 2\ntwo = refl\n"


def _toolchain(name: str, tuned: bool) -> tuple[Config, Toolchain]:
    config = Config(agda_toolchain=name, agda_tuned_runtime=tuned)
    found = agda_toolchain(config)
    if found is None:
        pytest.skip(f"the {name} Agda is not installed (scripts/agda-toolchain)")
    return config, found


def _package() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("agda")
    if spec is None or not spec.submodule_search_locations or pypi_launcher() is None:
        pytest.skip("the PyPI Agda is not installed (scripts/agda-toolchain)")
    return Path(next(iter(spec.submodule_search_locations)))


def test_the_launcher_reads_what_it_checks() -> None:
    package = _package()
    runtime = next((package.parent / "agda.libs").glob("libHSrts-*.so"))
    assert symbol_size(runtime, CONFIG_SYMBOL) == CONFIG_SIZE
    assert symbol_size(runtime, "hs_init_ghc") is not None
    assert symbol_size(runtime, "no_such_symbol_here") is None
    assert split_rts(["+RTS", "-A1m", "-RTS", "--safe"]) == (["-A1m"], ["--safe"])
    assert split_rts(["+RTS", "-A1m"]) == ([], ["+RTS", "-A1m"])  # no end: the plain script's
    assert split_rts(["--safe", "+RTS", "-A1m", "-RTS"]) == ([], ["--safe", "+RTS", "-A1m", "-RTS"])


def _mismatched_site(tmp_path: Path, package: Path) -> Path:
    """A copy (by symbolic links) of the installed package with a second runtime library
    beside the first: the launcher cannot tell which one the binding uses, so it must fall back."""
    site = tmp_path / "site"
    for folder in (package, package.parent / "agda.libs"):
        (site / folder.name).mkdir(parents=True)
        for entry in folder.iterdir():
            (site / folder.name / entry.name).symlink_to(entry)
    runtime = next((package.parent / "agda.libs").glob("libHSrts-*.so"))
    (site / "agda.libs" / "libHSrts-1-00000000.0.0-ghc9.6.4.so").symlink_to(runtime)
    return site


@pytest.mark.slow
def test_the_launcher_falls_back_to_the_plain_script(tmp_path: Path) -> None:
    package = _package()
    site = _mismatched_site(tmp_path, package)
    env = {**os.environ, "PYTHONPATH": str(site)}
    python = [sys.executable, str(LAUNCHER)]  # not -I: PYTHONPATH puts the copy first
    check = subprocess.run([*python, "--assay-check"], env=env, capture_output=True, text=True)
    assert check.stdout.startswith("fallback: 2 files match"), check.stdout
    assert (
        subprocess.run(
            [*python[:1], "-I", *python[1:], "--assay-check"], capture_output=True, text=True
        ).stdout.strip()
        == "ok"
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "Red.agda").write_text(
        f"module Red where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = refl\n"
    )
    argv = [*python, "+RTS", *PYPI_RTS_OPTIONS, "-RTS", "--safe", "--no-libraries", "-i", "."]
    fell_back = subprocess.run(
        [*argv, "Red.agda"], env=env, cwd=work, capture_output=True, text=True
    )
    (work / "Red.agdai").unlink(missing_ok=True)
    plain = subprocess.run(
        [str(pypi_launcher()), *argv[4 + len(PYPI_RTS_OPTIONS) :], "Red.agda"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert fell_back.returncode == plain.returncode == 42
    assert fell_back.stdout == plain.stdout and "1 + 1" in plain.stdout  # same words,
    assert fell_back.stderr == plain.stderr  # and no notice


def test_a_launcher_that_does_not_probe_right_is_not_used() -> None:
    _package()
    launcher = pypi_launcher()
    assert launcher is not None
    assert pypi_launch(launcher, "Agda version 0.0") == ()  # the probe prints another version


def _outcome(
    config: Config,
    plan_source: str,
    statement: str,
    name: str,
    sandbox: Sandbox,
    bypass: bool = False,
) -> tuple[str, bool, int | None, list[str]] | None:
    plan = _plan(plan_source, statement=statement, name=name, config=config)
    if bypass:
        plan = dataclasses.replace(plan, refusals=[])
    verdict = judge("agda", plan, sandbox, LIMITS, config=config).verdict
    if verdict is None:
        return None
    return verdict.finding, verdict.green, verdict.exit_code, verdict.diagnostics


TOOLCHAINS = ["pypi"]
"""The toolchains started with runtime options (Debian's has none: ``DEBIAN_RTS_OPTIONS``)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_tuned_and_plain_agree_on_cheats_canaries_green_and_red(
    name: str, sandbox: Sandbox
) -> None:
    tuned, found = _toolchain(name, True)
    plain, bare = _toolchain(name, False)
    assert found.launch and "+RTS" in found.launch and not bare.launch
    cases = [(source, "1 + 1 ≡ 3", "wrong", True) for source in CHEATS.values()]
    cases += [(f"canary : {s}\ncanary = refl\n", s, "canary", False) for s in CANARIES]
    cases += [(RED, "1 + 1 ≡ 2", "two", False), (RED, "1 + 1 ≡ 3", "two", False)]
    for source, statement, solution, bypass in cases:
        one = _outcome(tuned, source, statement, solution, sandbox, bypass)
        other = _outcome(plain, source, statement, solution, sandbox, bypass)
        assert one == other, (source, statement)
        assert one is not None and one[1] == (statement == "1 + 1 ≡ 2"), (source, one)


@pytest.mark.slow
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_the_command_names_the_options_and_reruns_outside_assay(
    name: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    config, found = _toolchain(name, True)
    for statement, code in (("1 + 1 ≡ 2", 0), ("1 + 1 ≡ 3", 42)):
        plan = _plan(RED, statement=statement, name="two", config=config)
        verdict = judge("agda", plan, sandbox, LIMITS, config=config).verdict
        assert verdict is not None and verdict.exit_code == code
        assert verdict.steps[0][: len(found.launch)] == list(found.launch)
        assert " +RTS -A" in verdict.command and " -RTS --safe " in verdict.command
        folder = tmp_path / str(code)
        folder.mkdir()
        for file, text in verdict.sources.items():
            (folder / file).write_text(text)
        rerun = subprocess.run(
            verdict.command, shell=True, cwd=folder, capture_output=True, timeout=300
        )
        assert rerun.returncode == code, rerun.stdout


STDLIB_HEADER = (
    "open import Relation.Binary.PropositionalEquality using (_≡_)\n"
    "open import Data.Nat using (ℕ; _+_)"
)
COMM = "∀ (m n : ℕ) → m + n ≡ n + m"


def comm_plan(arguments: str, config: Config) -> Plan:
    """The judgment of a solution of ``COMM`` by agda-stdlib's ``+-comm`` applied to
    ``arguments`` (``m n`` checks; ``+-comm n m`` has type ``n + m ≡ m + n``)."""
    solution = (
        f"module Solution where\n\n{STDLIB_HEADER}\nimport Data.Nat.Properties\n\n"
        f"comm : {COMM}\ncomm m n = Data.Nat.Properties.+-comm {arguments}\n"
    )
    return plan_for(
        "agda", solution, statement=COMM, name="comm", header=STDLIB_HEADER, config=config
    )


@pytest.mark.slow
@pytest.mark.parametrize(("arguments", "green"), [("m n", True), ("n m", False)])
def test_a_stdlib_judgment_agrees_tuned_and_plain(
    arguments: str, green: bool, sandbox: Sandbox
) -> None:
    """The library-importing judgment the options were tuned on (PyPI Agda, seconds each)."""
    verdicts: list[object] = []
    for tuned in (True, False):
        config, _ = _toolchain("pypi", tuned)
        plan = comm_plan(arguments, config)
        verdict = judge("agda", plan, sandbox, LIMITS, config=config).verdict
        assert verdict is not None and verdict.green == green, verdict
        verdicts.append((verdict.finding, verdict.exit_code, verdict.files, verdict.diagnostics))
        verdicts.append(verdict.command)
    assert verdicts[0] == verdicts[2] and verdicts[1] != verdicts[3]
