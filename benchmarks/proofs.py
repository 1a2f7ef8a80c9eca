"""Proof judgment costs: a batch judgment, the same from the cache, a question to the lane.

    .venv/bin/python benchmarks/proofs.py              # a file importing Data.Nat.Properties
    .venv/bin/python benchmarks/proofs.py --builtin    # builtin-only (seconds, not minutes)
    .venv/bin/python benchmarks/proofs.py --toolchain debian --toolchain pypi   # side by side

Each installed toolchain (``Config.agda_toolchain``: Debian's Agda 2.6.2.2 with Debian's
agda-stdlib, the PyPI Agda 2.6.4.3 with its own built copy; default: every one installed) is
measured in the same run, one after the other, on the same file.

In one run, interleaved: a bare plain ``agda`` on the same files (what a user would otherwise
run: no runtime options), the judgment's own command run bare (with the tuned runtime options,
``Config.agda_tuned_runtime``), the judgment through assay (sandbox, scan, wrapper, verdict) with
the tuned and with the plain runtime; then the verdict from the judgment cache and a goal query
on a warm interaction lane. Prints medians, peak memory of the bare runs, the ratios (tuned /
plain, Debian / PyPI), the harness's own share of a judgment against the same command run bare
(target under 2%) and against the plain bare run, the cache-hit time (target under 5 ms) and the
lane/batch ratio (target: a lane query at least 10x cheaper than a judgment).
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from assay._config import Config
from assay.proofs import AgdaLane, JudgmentCache, agda_toolchain, judge, plan_for
from assay.sandbox import Limits, Sandbox

STDLIB = """module Solution where

open import Relation.Binary.PropositionalEquality using (_≡_; refl)
open import Data.Nat using (ℕ; _+_)
import Data.Nat.Properties

comm : ∀ (m n : ℕ) → m + n ≡ n + m
comm m n = Data.Nat.Properties.+-comm m n

hole : ∀ (m n : ℕ) → m + n ≡ n + m
hole m n = {! !}
"""
STDLIB_HEADER = "open import Relation.Binary.PropositionalEquality using (_≡_)\nopen import Data.Nat using (ℕ; _+_)"
BUILTIN = """module Solution where

open import Agda.Builtin.Nat
open import Agda.Builtin.Equality

comm : 2 + 3 ≡ 3 + 2
comm = refl

hole : ∀ {A : Set} {x y : A} → x ≡ y → y ≡ x
hole p = {! !}
"""
BUILTIN_HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"


def share(judged: float, bare_time: float) -> str:
    """The harness's own share of a judgment against a bare run (negative: within the noise)."""
    return f"{(judged - bare_time) / judged:+.1%}"


def paired(judged: list[float], bare_times: list[float]) -> str:
    """The harness's share from each round's judgment and the bare run just before it: the
    median of those paired shares and their quartiles. A machine whose speed drifts over minutes
    moves both runs of a round alike, so the pairs are steadier than a difference of medians."""
    shares = sorted((j - b) / j for j, b in zip(judged, bare_times, strict=True))
    if len(shares) < 4:
        return f"paired {statistics.median(shares):+.1%}"
    low, _, high = statistics.quantiles(shares, n=4)
    return f"paired {statistics.median(shares):+.1%} (quartiles {low:+.1%} .. {high:+.1%})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--builtin", action="store_true", help="a builtin-only file instead of the stdlib one"
    )
    parser.add_argument(
        "--toolchain",
        action="append",
        choices=["debian", "pypi"],
        help="the Agda to measure (repeat for several; default: every one installed)",
    )
    args = parser.parse_args(argv)
    chosen = args.toolchain or ["debian", "pypi"]
    configs = [Config(agda_toolchain=name, judgment_cache="off") for name in chosen]
    installed = [c for c in configs if agda_toolchain(c) is not None]
    for config in configs:
        if config not in installed:
            print(f"toolchain {config.agda_toolchain}: not installed (scripts/agda-toolchain)")
    medians = {}
    for config in installed:
        medians[config.agda_toolchain] = measure(config, args.builtin, args.runs)
    if len(medians) == 2:
        judged = medians["debian"][0] / medians["pypi"][0]
        plain = medians["debian"][1] / medians["pypi"][1]
        print(f"debian / pypi: judgment {judged:.2f}x, plain bare agda {plain:.2f}x")
    print("target: a stdlib judgment <= 2.5 s on the machine the issue was measured on")
    return 0 if installed else 1


def bare(step: list[str], files: dict[str, bytes]) -> tuple[float, float, int]:
    """One run of ``step`` outside assay in a fresh folder holding ``files``: (seconds, CPU
    seconds, peak MiB). CPU time is the steadier figure on a shared machine."""
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            Path(folder, name).write_bytes(data)
        start = time.perf_counter()
        child = subprocess.Popen(
            step, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        assert child.returncode == 0, step
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def measure(config: Config, builtin: bool, runs: int) -> tuple[float, float]:
    """Print one toolchain's medians; return its judgment's and its plain bare run's (seconds)."""
    source, header, statement = (
        (BUILTIN, BUILTIN_HEADER, "2 + 3 ≡ 3 + 2")
        if builtin
        else (STDLIB, STDLIB_HEADER, "∀ (m n : ℕ) → m + n ≡ n + m")
    )
    sandbox = Sandbox(backend="bwrap")
    limits = Limits(timeout=600, memory_mb=4096)
    judged_source = source.split("\nhole ")[0]  # the judged file has no hole: it must check
    plain_config = config.model_copy(update={"agda_tuned_runtime": False})
    plans = {
        label: plan_for(
            "agda",
            judged_source,
            statement=statement,
            name="comm",
            header=header,
            stdlib=not builtin,
            config=chosen,
        )
        for label, chosen in (("tuned", config), ("plain", plain_config))
    }
    times: dict[str, list[float]] = {k: [] for k in ("bare", "bare tuned", "tuned", "plain")}
    peaks: dict[str, int] = {"bare": 0, "bare tuned": 0}
    cpus: dict[str, list[float]] = {"bare": [], "bare tuned": []}
    differs = plans["tuned"].steps != plans["plain"].steps  # Debian's: no options (the same)
    pairs = [("bare tuned", "tuned", config), ("bare", "plain", plain_config)]
    for _ in range(runs):  # interleaved, so a busy moment falls on every column alike
        # Each judgment right after the same command bare: the pair shares the machine's moment.
        for bare_label, label, chosen in pairs if differs else [("bare", "tuned", config)]:
            elapsed, cpu, peak = bare(plans[label].steps[0], plans["plain"].files)
            times[bare_label].append(elapsed)
            cpus[bare_label].append(cpu)
            peaks[bare_label] = max(peaks[bare_label], peak)
            start = time.perf_counter()
            verdict = judge("agda", plans[label], sandbox, limits, config=chosen).verdict
            times[label].append(time.perf_counter() - start)
            assert verdict is not None and verdict.green, verdict
    if not differs:
        times["bare tuned"], cpus["bare tuned"] = times["bare"], cpus["bare"]
        times["plain"], peaks["bare tuned"] = times["tuned"], peaks["bare"]
    plan = plans["tuned"]
    with tempfile.TemporaryDirectory() as folder:
        cache = JudgmentCache(Path(folder))
        judge("agda", plan, sandbox, limits, cache, config=config)
        hits = []
        for _ in range(200):
            start = time.perf_counter()
            cached = judge("agda", plan, sandbox, limits, cache, config=config).verdict
            hits.append(time.perf_counter() - start)
            assert cached is not None and cached.cached
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "Solution.agda"
        file.write_text(source)
        line = (
            source.splitlines().index(
                next(x for x in source.splitlines() if x.startswith("hole ") and "{!" in x)
            )
            + 1
        )
        column = source.splitlines()[line - 1].index("{!") + 1
        with AgdaLane(stdlib=not builtin, config=config) as lane:
            start = time.perf_counter()
            lane.goal(file, line, column)
            load = time.perf_counter() - start
            queries = []
            for _ in range(50):
                start = time.perf_counter()
                lane.goal(file, line, column)
                queries.append(time.perf_counter() - start)

    med = {label: statistics.median(values) for label, values in times.items()}
    judged = med["tuned"]
    hit_time, query = statistics.median(hits), statistics.median(queries)
    toolchain = agda_toolchain(config)
    assert toolchain is not None
    print(
        f"toolchain {config.agda_toolchain}: {toolchain.version} ({toolchain.binary}); file: "
        f"{'builtin-only' if builtin else 'imports Data.Nat.Properties (agda-stdlib)'}, {runs} runs"
    )
    print(f"  runtime options: {shlex.join(toolchain.launch) or '(none: the plain agda)'}")
    print(
        f"  bare agda, plain (what a user runs)   {med['bare'] * 1000:8.0f} ms  "
        f"peak {peaks['bare']} MiB, CPU {statistics.median(cpus['bare']):.2f} s"
    )
    if differs:
        print(
            f"  bare agda, tuned options             {med['bare tuned'] * 1000:8.0f} ms  "
            f"peak {peaks['bare tuned']} MiB, CPU {statistics.median(cpus['bare tuned']):.2f} s   "
            f"tuned / plain {med['bare tuned'] / med['bare']:.2f}x (CPU "
            f"{statistics.median(cpus['bare tuned']) / statistics.median(cpus['bare']):.2f}x)"
        )
        print(
            f"  assay judgment, tuned (the default)  {judged * 1000:8.0f} ms  "
            f"harness share {share(judged, med['bare tuned'])} vs the same command bare, "
            f"{paired(times['tuned'], times['bare tuned'])}; "
            f"{share(judged, med['bare'])} vs plain bare (target < 2%)"
        )
        print(
            f"  assay judgment, plain runtime        {med['plain'] * 1000:8.0f} ms  "
            f"harness share {share(med['plain'], med['bare'])} vs the same command bare, "
            f"{paired(times['plain'], times['bare'])}; "
            f"tuned / plain judgment {judged / med['plain']:.2f}x"
        )
    else:
        print(
            f"  assay judgment (no runtime options)  {judged * 1000:8.0f} ms  "
            f"harness share {share(judged, med['bare'])} vs the same command bare, "
            f"{paired(times['tuned'], times['bare'])} (target < 2%)"
        )
    print(f"  cached verdict                       {hit_time * 1000:10.3f} ms   (target < 5 ms)")
    print(
        f"  lane: load {load * 1000:.0f} ms, then a goal query {query * 1000:.2f} ms   "
        f"judgment / query = {judged / query:,.0f}x (target >= 10x)"
    )
    return judged, med["bare"]


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
