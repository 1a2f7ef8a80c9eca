"""Math-answer equivalence: assay's ``answer_math`` against Math-Verify 0.9.0, on the same labelled
corpus (tests/data/math_corpus.jsonl), in the same run.

    .venv/bin/python benchmarks/answer_math.py                 # the whole corpus
    .venv/bin/python benchmarks/answer_math.py --every 10      # a quick look: every 10th pair

Prints, for each tool: accuracy, accuracy on equivalent pairs, false accepts (a pair labelled not
equivalent that the tool accepts), false rejects, median, p99 and worst time per pair, and pairs/s
over the whole corpus with the ratio (these machines are noisy: trust ratios, not absolute
times). Exits 1 if assay accepts any pair labelled not equivalent. Pairs marked ``policy`` are
labelled by a rule of assay's rather than by mathematics (a unit or percent on one side only,
``x = 3`` for ``3``, a mixed number): Math-Verify's accepts there are counted apart. For assay, "accept" means
``verified``; ``inconclusive`` on an equivalent pair counts as a false reject.

Both sides do the per-pair work a trainer pays for: assay builds the check from its spec and
runs it on the model's answer; Math-Verify parses the gold answer (given as ``$...$``, the form
its README uses) and the model's answer, and verifies. Both are warmed up first (imports,
assay's symbolic worker). Math-Verify runs with its default 5 s timeouts, in the main thread.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay import CheckContext, Status, build_check

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "math_corpus.jsonl"


def load(every: int = 1) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    return rows[::every]


@dataclass
class Tally:
    name: str
    times: list[float] = field(default_factory=list)
    accepted: list[bool] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)
    false_accepts: list[dict[str, Any]] = field(default_factory=list)


def run_assay(row: dict[str, Any]) -> tuple[float, Status, str]:
    spec = {"kind": "answer_math", "value": row["reference"], **row.get("spec", {})}
    start = time.perf_counter()
    outcome = build_check(spec).run(CheckContext(answer=row["answer"]))
    elapsed = time.perf_counter() - start
    step = (outcome.evidence or {}).get("step", "") or "extract/parse"
    return elapsed, outcome.status, str(step)


def run_math_verify(row: dict[str, Any]) -> tuple[float, bool]:
    from math_verify import parse, verify

    start = time.perf_counter()
    try:
        accepted = bool(verify(parse("$" + row["reference"] + "$"), parse(row["answer"])))
    except BaseException as exc:  # Math-Verify's timeout error derives from BaseException
        if isinstance(exc, KeyboardInterrupt):
            raise
        accepted = False
    return time.perf_counter() - start, accepted


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _line(tally: Tally, rows: Sequence[dict[str, Any]]) -> str:
    labels = [bool(r["equivalent"]) for r in rows]
    correct = sum(a == lab for a, lab in zip(tally.accepted, labels, strict=True))
    equivalent = [a for a, lab in zip(tally.accepted, labels, strict=True) if lab]
    false_rejects = len(equivalent) - sum(equivalent)
    total = sum(tally.times)
    return (
        f"{tally.name:<12} {correct / len(rows):>8.1%} {sum(equivalent) / max(1, len(equivalent)):>10.1%}"
        f" {len(tally.false_accepts):>7} {false_rejects:>7} {statistics.median(tally.times) * 1e3:>9.2f}"
        f" {_percentile(tally.times, 0.99) * 1e3:>9.1f} {max(tally.times) * 1e3:>9.0f}"
        f" {len(rows) / total:>9,.0f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="take every n-th pair (quick look)")
    parser.add_argument(
        "--no-math-verify", action="store_true", help="run assay alone (no comparison)"
    )
    args = parser.parse_args(argv)
    rows = load(args.every)
    compare = not args.no_math_verify

    # Warm both sides outside the timed runs: imports, mpmath, and assay's symbolic worker.
    from assay.checks._math import _worker

    _worker.WORKER.warm()
    for row in load()[:40]:
        run_assay(row)
    run_assay({"answer": "\\boxed{\\sin^2 x + \\cos^2 x}", "reference": "1"})
    if compare:
        run_math_verify({"answer": "\\boxed{\\frac{1}{2}}", "reference": "0.5"})

    ours, theirs = Tally("assay"), Tally("Math-Verify")
    for row in rows:
        elapsed, status, step = run_assay(row)
        ours.times.append(elapsed)
        ours.accepted.append(status is Status.VERIFIED)
        ours.other[f"{status.value}"] += 1
        ours.other[f"step {step}"] += 1
        if status is Status.VERIFIED and not row["equivalent"]:
            ours.false_accepts.append(row)
        if compare:
            elapsed, accepted = run_math_verify(row)
            theirs.times.append(elapsed)
            theirs.accepted.append(accepted)
            if accepted and not row["equivalent"]:
                theirs.false_accepts.append(row)

    print(f"corpus: {len(rows)} pairs, {sum(r['equivalent'] for r in rows)} equivalent")
    print(
        f"{'tool':<12} {'accuracy':>8} {'equiv acc':>10} {'f.acc':>7} {'f.rej':>7}"
        f" {'median ms':>9} {'p99 ms':>9} {'worst ms':>9} {'pairs/s':>9}"
    )
    print(_line(ours, rows))
    if compare:
        print(_line(theirs, rows))
        ratio = sum(theirs.times) / sum(ours.times)
        print(f"pairs/s ratio (assay / Math-Verify): {ratio:.1f}x")
        ordinary = [i for i, r in enumerate(rows) if r["class"] != "pathological"]
        if ordinary:
            mine = sum(ours.times[i] for i in ordinary)
            other = sum(theirs.times[i] for i in ordinary)
            print(
                f"without the pathological pairs ({len(ordinary)} pairs, no Math-Verify stalls): "
                f"assay {len(ordinary) / mine:,.0f} pairs/s, Math-Verify "
                f"{len(ordinary) / other:,.0f} pairs/s, ratio {other / mine:.1f}x"
            )
    print(
        "assay outcomes: "
        + ", ".join(f"{k} {v}" for k, v in sorted(ours.other.items()) if not k.startswith("step"))
    )
    print(
        "assay deciding step: "
        + ", ".join(f"{k[5:]} {v}" for k, v in sorted(ours.other.items()) if k.startswith("step"))
    )
    print(f"assay symbolic worker processes started: {_worker.WORKER.started}")
    print(f"assay false accepts {len(ours.false_accepts)}")
    if compare:
        policy = [r for r in theirs.false_accepts if r.get("policy")]
        classes = Counter(r["class"] for r in theirs.false_accepts if not r.get("policy"))
        print(
            f"Math-Verify false accepts {len(theirs.false_accepts) - len(policy)} on mathematics"
            + (
                " (" + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())) + ")"
                if classes
                else ""
            )
            + f", and {len(policy)} more where assay's stricter rules decide (units, percent, x = 3)"
        )
        for row in theirs.false_accepts:
            mark = " [rule]" if row.get("policy") else ""
            print(f"  Math-Verify accepted {row['answer']!r} for {row['reference']!r}{mark}")
    for row in ours.false_accepts:
        print(f"  assay accepted {row['answer']!r} for {row['reference']!r}")
    return 1 if ours.false_accepts else 0


if __name__ == "__main__":
    sys.exit(main())
