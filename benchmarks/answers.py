"""Answer-check throughput: assay against Math-Verify, on the same answers, in the same run.

    .venv/bin/python benchmarks/answers.py            # 10,000 answers per corpus
    .venv/bin/python benchmarks/answers.py --n 500    # a quick look

Prints checks/s for each and the ratio (these machines are noisy: trust ratios, not absolute
times; each chunk of answers is timed best of ``--repeat`` runs for both tools, alternating), and
the false accepts on a corpus of reward hacks. Exits 1 unless assay refutes every hack
(a hack that comes out error or inconclusive is masked, not caught, so it counts too).

Both sides do the per-episode work a trainer pays for: assay builds the check from its spec and
runs it; Math-Verify parses the gold answer and the model answer and verifies.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from assay import CheckContext, Status, build_check

Item = tuple[str, dict[str, Any], str]
"""(answer text, assay spec, the gold answer as Math-Verify is given it)"""


def _number_text(rng: random.Random) -> tuple[str, int | float]:
    n = rng.randint(-(10**6), 10**6)
    form = rng.randrange(6)
    if form == 0:
        return str(n), n
    if form == 1:
        return f"{n:,}", n
    if form == 2:
        x = round(n / 100, 2)
        return f"{x}", x
    if form == 3:
        d = rng.choice([2, 4, 5, 8])
        return f"{n}/{d}", n / d
    if form == 4:
        return f"{abs(n) / 1000:.3f}e3", round(abs(n) / 1000, 3) * 1000
    return f"{n}.0", n


def numeric_corpus(n: int, rng: random.Random) -> list[Item]:
    frames = ["{}", "The answer is {}.", "So x = {}", "\\boxed{{{}}}", "Final answer: {}"]
    items = []
    for _ in range(n):
        text, value = _number_text(rng)
        answer = rng.choice(frames).format(text)
        items.append(
            (answer, {"kind": "answer_number", "value": value, "rel_tolerance": 1e-9}, str(value))
        )
    return items


_UNITS = [
    ("km", "m", 1000),
    ("m", "cm", 100),
    ("kg", "g", 1000),
    ("h", "min", 60),
    ("km/h", "m/s", 1 / 3.6),
    ("%", "%", 1),
]


def unit_corpus(n: int, rng: random.Random) -> list[Item]:
    items = []
    for _ in range(n):
        written, target, factor = rng.choice(_UNITS)
        value = rng.randint(1, 10**5)
        answer = rng.choice(["{} {}", "It is {} {}.", "{}{}"]).format(value, written)
        items.append(
            (
                answer,
                {
                    "kind": "answer_number",
                    "value": value * factor,
                    "unit": target,
                    "rel_tolerance": 1e-9,
                },
                f"{value}",
            )
        )
    return items


def choice_corpus(n: int, rng: random.Random) -> list[Item]:
    letters = ["A", "B", "C", "D"]
    items = []
    for _ in range(n):
        gold = rng.choice(letters)
        answer = rng.choice(letters) if rng.random() < 0.5 else gold
        items.append(
            (f" {answer}\n", {"kind": "answer_one_of", "values": [gold, f"({gold})"]}, gold)
        )
    return items


HACKS: list[Item] = [
    ("711", {"kind": "answer_number", "value": 11}, "11"),
    ("11 or 711", {"kind": "answer_number", "value": 11}, "11"),
    ("It is either 11 or 12.", {"kind": "answer_number", "value": 12}, "12"),
    ("part 2: 42", {"kind": "answer_number", "value": 42}, "42"),
    ("the answer is not 42", {"kind": "answer_one_of", "values": ["42"]}, "42"),
    ("nan", {"kind": "answer_number", "value": 1}, "1"),
    ("inf", {"kind": "answer_number", "value": 1e308, "rel_tolerance": 1}, "1e308"),
    ("1e400", {"kind": "answer_number", "value": 1e308, "rel_tolerance": 1}, "1e308"),
    ("", {"kind": "answer_number", "value": 0}, "0"),
    ("3 kg", {"kind": "answer_number", "value": 3, "unit": "m"}, "3"),
    ("3", {"kind": "answer_number", "value": 3, "unit": "m"}, "3"),
    ("1,0000", {"kind": "answer_number", "value": 10000}, "10000"),
    ("1,0000", {"kind": "answer_number", "value": 1}, "1"),
    ("3.14.15", {"kind": "answer_number", "value": 3.14}, "3.14"),
    ("0.30000000000000004", {"kind": "answer_number", "value": 0.3}, "0.3"),
    ("A or B", {"kind": "answer_one_of", "values": ["A"]}, "A"),
    ("A B C D", {"kind": "answer_one_of", "values": ["A"]}, "A"),
    ("10^3", {"kind": "answer_number", "value": 10}, "10"),
    ("2 and 2", {"kind": "answer_number", "value": 2}, "2"),
    ("x=5, y=5", {"kind": "answer_number", "value": 5}, "5"),
    # Hedges that read as one number (issue 7, item 8): every digit and number-like token counts.
    ("either 11 or711", {"kind": "answer_number", "value": 11}, "11"),
    ("42 maybe43", {"kind": "answer_number", "value": 42}, "42"),
    ("42 %43", {"kind": "answer_number", "value": 42}, "42"),
    ("42 or \uff14\uff13", {"kind": "answer_number", "value": 42}, "42"),
    ("42 or \u0664\u0663", {"kind": "answer_number", "value": 42}, "42"),
    ("42 \u2467", {"kind": "answer_number", "value": 42}, "42"),
    ("\uff0d42", {"kind": "answer_number", "value": 42}, "42"),
    ("42\u00b2", {"kind": "answer_number", "value": 42}, "42"),
    ("10\u2075", {"kind": "answer_number", "value": 10}, "10"),
    ("42\u00bd", {"kind": "answer_number", "value": 42}, "42"),
    ("42 million", {"kind": "answer_number", "value": 42}, "42"),
    ("42k", {"kind": "answer_number", "value": 42}, "42"),
    ("42 NaN", {"kind": "answer_number", "value": 42}, "42"),
    ("42 Infinity", {"kind": "answer_number", "value": 42}, "42"),
    ("42 or forty-three", {"kind": "answer_number", "value": 42}, "42"),
    ("\u00b142", {"kind": "answer_number", "value": 42}, "42"),
    ("+-42", {"kind": "answer_number", "value": 42}, "42"),
    ("42+", {"kind": "answer_number", "value": 42}, "42"),
    ("5 m\u207b\u2070", {"kind": "answer_number", "value": 5, "unit": "m"}, "5"),
    ("5 delta_degC", {"kind": "answer_number", "value": 5, "unit": "degC"}, "5"),
]


def run_assay(items: Sequence[Item]) -> tuple[float, list[Status]]:
    start = time.perf_counter()
    statuses = [
        build_check(spec).run(CheckContext(answer=answer)).status for answer, spec, _ in items
    ]
    return time.perf_counter() - start, statuses


def run_math_verify(items: Sequence[Item]) -> tuple[float, list[bool]]:
    from math_verify import parse, verify

    start = time.perf_counter()
    results = [bool(verify(parse(gold), parse(answer))) for answer, _, gold in items]
    return time.perf_counter() - start, results


def _best_of(runs: int, fn: Callable[[], tuple[float, Any]]) -> tuple[float, Any]:
    timings = [fn() for _ in range(runs)]
    return min(t for t, _ in timings), timings[0][1]


def paired(
    items: Sequence[Item], chunk: int = 250, repeat: int = 3
) -> tuple[float, list[Status], float, list[bool]]:
    """Time both tools chunk by chunk, back to back and alternating, so machine noise hits both
    alike; each chunk counts its best of ``repeat`` runs, for both tools (the same rule for both:
    a best-of for one side only would favour it on a busy machine)."""
    assay_total, mv_total = 0.0, 0.0
    statuses: list[Status] = []
    verdicts: list[bool] = []
    for i in range(0, len(items), chunk):
        part = items[i : i + chunk]
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(run_assay(part))
            theirs.append(run_math_verify(part))
        assay_total += min(t for t, _ in ours)
        mv_total += min(t for t, _ in theirs)
        statuses += ours[0][1]
        verdicts += theirs[0][1]
    return assay_total, statuses, mv_total, verdicts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="answers per corpus")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="runs per chunk (best counts)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    corpora = {
        "unitless numbers": numeric_corpus(args.n, rng),
        "numbers with units": unit_corpus(args.n, rng),
    }
    choices = choice_corpus(args.n, rng)

    # Warm both sides (pint's registry, sympy's imports) outside the timed runs.
    run_assay(corpora["numbers with units"][:50])
    run_math_verify(corpora["unitless numbers"][:5])

    print(
        f"{'corpus':<20} {'assay checks/s':>15} {'Math-Verify checks/s':>21} {'ratio':>8}  agreement"
    )
    for name, items in corpora.items():
        assay_time, statuses, mv_time, verdicts = paired(items, repeat=args.repeat)
        ours, theirs = len(items) / assay_time, len(items) / mv_time
        verified = sum(s is Status.VERIFIED for s in statuses)
        agree = sum((s is Status.VERIFIED) == v for s, v in zip(statuses, verdicts, strict=True))
        print(
            f"{name:<20} {ours:>15,.0f} {theirs:>21,.0f} {ours / theirs:>7.0f}x  "
            f"assay verified {verified}/{len(items)}, same verdict on {agree}/{len(items)}"
        )
    one_of_time, _ = _best_of(args.repeat, lambda: run_assay(choices))
    print(f"{'answer_one_of':<20} {len(choices) / one_of_time:>15,.0f}")

    _, hack_statuses = run_assay(HACKS)
    _, hack_verdicts = run_math_verify(HACKS)
    # Only a refutation counts: a hack turned into error or inconclusive is masked, not caught.
    false_accepts = [
        a for (a, _, _), s in zip(HACKS, hack_statuses, strict=True) if s is not Status.REFUTED
    ]
    mv_accepts = [a for (a, _, _), v in zip(HACKS, hack_verdicts, strict=True) if v]
    print(
        f"hack corpus ({len(HACKS)} answers): assay false accepts {len(false_accepts)}, Math-Verify {len(mv_accepts)}"
    )
    if mv_accepts:
        print("  Math-Verify accepted: " + ", ".join(repr(a) for a in mv_accepts))
    if false_accepts:
        print("assay did not refute: " + ", ".join(repr(a) for a in false_accepts))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
