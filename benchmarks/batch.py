"""``assay batch`` throughput: answer episodes on the local pool (1 and 2 workers) and on a local
Ray instance, against a plain in-process loop of ``judge_item``, in the same run.

    .venv/bin/python benchmarks/batch.py               # 10,000 episodes
    .venv/bin/python benchmarks/batch.py --n 500 --no-ray
    .venv/bin/python benchmarks/batch.py --chunks 1,16,64,256   # also: fixed chunk sizes

Each executor runs the whole batch file to a results file (``run_batch``: read, judge, write in
input order), with its workers already started (start-up is printed apart: a pool costs seconds
here, Ray about ten). Items/s for each, the scaling ratio of 2 workers over 1, and each against
the in-process loop. These machines are shared and noisy: trust the ratios more than the
absolute figures. Exits 1 unless every executor wrote byte-identical results.

The episodes: a seeded mix of ``answer_number`` (half), ``answer_math`` and ``answer_equals``
(a quarter each), about a third of them wrong.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay import Config
from assay.episodes import judge_item
from assay.executors import Executor, Job, LocalExecutor, make_executor, run_batch


def episodes(n: int, rng: random.Random) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(n):
        right = rng.random() < 0.67
        roll = rng.random()
        if roll < 0.5:
            value = rng.randint(-(10**6), 10**6)
            given = value if right else value + rng.randint(1, 9)
            frame = rng.choice(["{}", "The answer is {}.", "\\boxed{{{}}}", "{:,}"])
            check = {"kind": "answer_number", "value": value}
            answer = frame.format(given)
        elif roll < 0.75:
            p, q = rng.randint(1, 99), rng.randint(2, 99)
            k = rng.randint(2, 5)
            shown = f"\\frac{{{p * k}}}{{{q * k}}}" if right else f"\\frac{{{p + 1}}}{{{q}}}"
            check = {"kind": "answer_math", "value": f"{p}/{q}"}
            answer = f"So the ratio is \\boxed{{{shown}}}."
        else:
            word = rng.choice(["yes", "no", "maybe", "B", "C"])
            check = {"kind": "answer_equals", "value": word}
            answer = f" {word}\n" if right else f"{word}!"
        items.append({"id": f"ep-{i}", "checks": [check], "answer": answer})
    return items


def in_process(items: Sequence[dict[str, Any]], config: Config, lines: bool = False) -> float:
    """The baseline a user would write: one loop of ``judge_item``, nothing else (``lines``:
    also each result's JSON line, the share of a batch's work that is not judging)."""
    start = time.perf_counter()
    for item in items:
        result = judge_item(item, root=None, config=config)
        if lines:
            json.dumps(result.to_json())
    return time.perf_counter() - start


def timed(make: Callable[[], Executor], source: Path, out: Path) -> tuple[float, float]:
    """(start-up seconds, batch seconds): start-up is making the executor (Ray: starting the
    instance) and a few items through it (the workers' start)."""
    start = time.perf_counter()
    warm = [Job({"id": "w", "checks": [{"kind": "answer_equals", "value": "x"}], "answer": "x"})]
    with make() as executor:
        list(executor.map(warm * 8))
        started = time.perf_counter() - start
        out.unlink(missing_ok=True)
        summary = run_batch(source, executor, out=out)
    return started, summary.seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="episodes")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray executor")
    parser.add_argument("--chunks", default="", help="also time 2 workers at these chunk sizes")
    args = parser.parse_args(argv)
    config = Config()
    items = episodes(args.n, random.Random(args.seed))
    with tempfile.TemporaryDirectory(prefix="assay-batch-bench-") as folder:
        base = Path(folder)
        source = base / "episodes.jsonl"
        source.write_text("".join(json.dumps(item) + "\n" for item in items))
        in_process(items[:200], config)  # warm: pint, the math grammar
        baseline = args.n / in_process(items, config)
        print(f"{'runner':<28} {'start-up s':>10} {'items/s':>10} {'vs in-process':>14}")
        print(f"{'in-process judge_item loop':<28} {'-':>10} {baseline:>10,.0f} {1:>13.2f}x")
        with_lines = args.n / in_process(items, config, lines=True)
        print(
            f"{'in-process, + JSON lines':<28} {'-':>10} {with_lines:>10,.0f} "
            f"{with_lines / baseline:>13.2f}x"
        )
        rates: dict[str, float] = {}
        outputs: dict[str, bytes] = {}
        runs: list[tuple[str, dict[str, Any]]] = [
            ("local, 1 worker", {"jobs": 1}),
            ("local, 2 workers", {"jobs": 2}),
        ]
        runs += [
            (f"local, 2 workers, chunk {c}", {"jobs": 2, "chunk_size": int(c)})
            for c in args.chunks.split(",")
            if c
        ]
        for name, options in runs:
            out = base / "out.jsonl"
            started, seconds = timed(
                lambda o=options: LocalExecutor(root=base, config=config, **o), source, out
            )
            rates[name] = args.n / seconds
            outputs[name] = out.read_bytes()
            print(
                f"{name:<28} {started:>10.1f} {rates[name]:>10,.0f} "
                f"{rates[name] / baseline:>13.2f}x"
            )
        if not args.no_ray:
            out = base / "out.jsonl"
            started, seconds = timed(
                lambda: make_executor("ray", root=base, config=config, jobs=2), source, out
            )
            rates["ray"] = args.n / seconds
            outputs["ray"] = out.read_bytes()
            print(
                f"{'ray (local instance, 2 CPUs)':<28} {started:>10.1f} {rates['ray']:>10,.0f} "
                f"{rates['ray'] / baseline:>13.2f}x"
            )
    scaling = rates["local, 2 workers"] / rates["local, 1 worker"]
    print(f"scaling, local 2 workers / 1 worker: {scaling:.2f}x (2 cores)")
    reference = outputs["local, 1 worker"]
    differ = [name for name, data in outputs.items() if data != reference]
    lines = reference.count(b"\n")
    print(
        f"results byte-identical across executors: {'no: ' + ', '.join(differ) if differ else 'yes'} ({lines} lines)"
    )
    return 1 if differ or lines != args.n else 0


if __name__ == "__main__":
    sys.exit(main())
