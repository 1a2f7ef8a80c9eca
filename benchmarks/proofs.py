"""Proof judgment costs: a batch judgment, the same from the cache, a question to the lane.

    .venv/bin/python benchmarks/proofs.py              # a file importing Data.Nat.Properties
    .venv/bin/python benchmarks/proofs.py --builtin    # builtin-only (seconds, not minutes)
    .venv/bin/python benchmarks/proofs.py --toolchain debian --toolchain pypi   # side by side

Each installed toolchain (``Config.agda_toolchain``: Debian's Agda 2.6.2.2 with Debian's
agda-stdlib, the PyPI Agda 2.6.4.3 with its own built copy; default: every one installed) is
measured in the same run, one after the other, on the same file.

In one run, interleaved: a bare ``agda`` on the same files (what a user would otherwise run), the
same judgment through assay (sandbox, scan, wrapper, verdict), the verdict from the judgment
cache, and a goal query on a warm interaction lane. Prints medians, the harness's own share of a
judgment (target under 2%), the cache-hit time (target under 5 ms) and the lane/batch ratio
(target: a lane query at least 10x cheaper than a judgment).
"""

from __future__ import annotations

import argparse
import os
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
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
        ratio = medians["debian"] / medians["pypi"]
        print(f"debian / pypi judgment time: {ratio:.2f}x (target: a stdlib judgment <= 2.5 s)")
    return 0 if installed else 1


def measure(config: Config, builtin: bool, runs: int) -> float:
    """Print one toolchain's medians; return its judgment's median (seconds)."""
    source, header, statement = (
        (BUILTIN, BUILTIN_HEADER, "2 + 3 ≡ 3 + 2")
        if builtin
        else (STDLIB, STDLIB_HEADER, "∀ (m n : ℕ) → m + n ≡ n + m")
    )
    sandbox = Sandbox(backend="bwrap")
    limits = Limits(timeout=600, memory_mb=4096)
    judged_source = source.split("\nhole ")[0]  # the judged file has no hole: it must check
    plan = plan_for(
        "agda",
        judged_source,
        statement=statement,
        name="comm",
        header=header,
        stdlib=not builtin,
        config=config,
    )
    bare_times, judge_times = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            for name, data in plan.files.items():
                Path(folder, name).write_bytes(data)
            start = time.perf_counter()
            subprocess.run(plan.steps[0], cwd=folder, check=True, capture_output=True)
            bare_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        verdict = judge("agda", plan, sandbox, limits, config=config).verdict
        judge_times.append(time.perf_counter() - start)
        assert verdict is not None and verdict.green, verdict
    with tempfile.TemporaryDirectory() as folder:
        cache = JudgmentCache(Path(folder))
        judge("agda", plan, sandbox, limits, cache, config=config)
        hits = []
        for _ in range(200):
            start = time.perf_counter()
            hit = judge("agda", plan, sandbox, limits, cache, config=config).verdict
            hits.append(time.perf_counter() - start)
            assert hit is not None and hit.cached
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

    bare, judged = statistics.median(bare_times), statistics.median(judge_times)
    hit, query = statistics.median(hits), statistics.median(queries)
    share = (judged - bare) / judged
    toolchain = agda_toolchain(config)
    assert toolchain is not None
    print(
        f"toolchain {config.agda_toolchain}: {toolchain.version} ({toolchain.binary}); file: "
        f"{'builtin-only' if builtin else 'imports Data.Nat.Properties (agda-stdlib)'}, {runs} runs"
    )
    print(f"  bare agda                       {bare * 1000:10.1f} ms (median)")
    print(
        f"  assay judgment (sandbox, scan)  {judged * 1000:10.1f} ms   harness share {share:.1%} (target < 2%)"
    )
    print(f"  cached verdict                  {hit * 1000:10.3f} ms   (target < 5 ms)")
    print(
        f"  lane: load {load * 1000:.0f} ms, then a goal query {query * 1000:.2f} ms   "
        f"judgment / query = {judged / query:,.0f}x (target >= 10x)"
    )
    return judged


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
