"""``sat_assignment`` speed: a 1,000,000-clause random 3-SAT instance, end to end, against a naive checker.

    .venv/bin/python benchmarks/sat.py                      # 1,000,000 clauses, best of 3
    .venv/bin/python benchmarks/sat.py --clauses 20000      # a quick look

The instance is random 3-SAT at the 4.26 clauses-per-variable threshold, made from a fixed seed
around a planted solution (every clause is drawn until the planted assignment satisfies it), so
it has a known satisfying assignment. Timed end to end through the kind (build the check, read
both files, hash them for the evidence, parse, evaluate): the planted assignment with the
formula parsed anew ("cold": each run gets a formula whose bytes differ by a comment) and with
the formula already parsed ("warm": the kind keeps a parsed formula by its sha256, as when one
reference judges many submissions), and the same with one variable flipped (refuted, naming the
first false clause). The comparison is a straightforward pure-Python checker as a user would
write it (python-sat is not installed here, and a solver such as pycosat solves rather than
checks): it reads the same files, builds a set of true literals and tests every clause with
``any``; it checks nothing about the input's form. Both must agree on both verdicts
(exit 1 otherwise). These machines are noisy: the runs are interleaved and the best of each
kept; trust the ratio, not the absolute times.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay import CheckContext, Status, build_check

SEED = 20261201


def make_instance(clauses: int, seed: int = SEED) -> tuple[bytes, list[int]]:
    """(DIMACS text, the planted assignment as literals): random 3-SAT the planted one satisfies."""
    rng = random.Random(seed)
    variables = max(3, round(clauses / 4.26))
    planted = [v if rng.getrandbits(1) else -v for v in range(variables + 1)]
    lines = [f"c random 3-SAT, seed {seed}, planted solution\np cnf {variables} {clauses}\n"]
    randrange, bits = rng.randrange, rng.getrandbits
    for _ in range(clauses):
        while True:
            a, b, c = (
                randrange(1, variables + 1),
                randrange(1, variables + 1),
                randrange(1, variables + 1),
            )
            if a in (b, c) or b == c:
                continue
            signs = bits(3)
            x = a if signs & 1 else -a
            y = b if signs & 2 else -b
            z = c if signs & 4 else -c
            if x == planted[a] or y == planted[b] or z == planted[c]:
                break
        lines.append(f"{x} {y} {z} 0\n")
    return "".join(lines).encode(), planted[1:]


def competition(literals: Sequence[int]) -> bytes:
    """The SAT-competition form, ``v`` lines of at most about 80 characters."""
    out, line = ["s SATISFIABLE\n"], ["v"]
    for literal in literals:
        line.append(str(literal))
        if len(line) == 12:
            out.append(" ".join(line) + "\n")
            line = ["v"]
    line.append("0")
    out.append(" ".join(line) + "\n")
    return "".join(out).encode()


def naive(formula: Path, assignment: Path) -> int | None:
    """A checker as a user would write it: the index of the first false clause, or None."""
    true: set[int] = set()
    for line in assignment.read_text().splitlines():
        if line.startswith("v"):
            true.update(int(token) for token in line.split()[1:] if token != "0")
    clauses: list[list[int]] = []
    current: list[int] = []
    for line in formula.read_text().splitlines():
        if line.startswith(("c", "p")):
            continue
        for token in line.split():
            literal = int(token)
            if literal == 0:
                clauses.append(current)
                current = []
            else:
                current.append(literal)
    for index, clause in enumerate(clauses, start=1):
        if not any(literal in true for literal in clause):
            return index
    return None


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clauses", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    made = time.perf_counter()
    formula, planted = make_instance(args.clauses)
    flipped = list(planted)
    flipped[0] = -flipped[0]
    made = time.perf_counter() - made
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "ws").mkdir()
        (root / "ws" / "good.txt").write_bytes(competition(planted))
        (root / "ws" / "bad.txt").write_bytes(competition(flipped))
        for run in range(args.repeat):  # other bytes, so each cold run parses anew
            (root / f"cold{run}.cnf").write_bytes(formula + f"c run {run}\n".encode())
        (root / "formula.cnf").write_bytes(formula)
        ctx = CheckContext(workspace=root / "ws", base_dir=root)

        def assay(name: str, formula_file: str = "formula.cnf") -> Any:
            spec = {"kind": "sat_assignment", "artifact": name, "formula": formula_file}
            return build_check(spec).run(ctx)

        assay("good.txt")  # the formula the warm runs reuse is parsed once, untimed
        runs: dict[str, list[tuple[float, Any]]] = {}
        for run in range(args.repeat):  # interleaved, so a busy machine slows each alike
            for label, work in (
                ("cold", lambda run=run: assay("good.txt", f"cold{run}.cnf")),
                ("warm", lambda: assay("good.txt")),
                ("warm_bad", lambda: assay("bad.txt")),
                ("naive", lambda: naive(root / "formula.cnf", root / "ws" / "good.txt")),
                ("naive_bad", lambda: naive(root / "formula.cnf", root / "ws" / "bad.txt")),
            ):
                runs.setdefault(label, []).append(timed(work))
        (cold_time, cold_out), (good_time, good), (bad_time, bad) = (
            min(runs[label], key=lambda r: r[0]) for label in ("cold", "warm", "warm_bad")
        )
        (naive_good_time, naive_good), (naive_bad_time, naive_bad) = (
            min(runs[label], key=lambda r: r[0]) for label in ("naive", "naive_bad")
        )

    variables = len(planted)
    bad_clause = (bad.evidence or {}).get("clause")
    rows = [
        ("assay, formula parsed (cold), verified", cold_time, f"[{cold_out.status}]"),
        ("assay, formula reused (warm), verified", good_time, f"[{good.status}]"),
        ("assay, formula reused, one flipped", bad_time, f"[{bad.status}, clause {bad_clause}]"),
        ("naive checker, planted", naive_good_time, ""),
        ("naive checker, one flipped", naive_bad_time, f"[clause {naive_bad}]"),
    ]
    print(
        f"instance: {args.clauses:,} clauses, {variables:,} variables, "
        f"{len(formula) / 1e6:.1f} MB (made in {made:.1f} s, seed {SEED})"
    )
    for label, seconds, note in rows:
        print(f"{label:<42} best of {args.repeat}: {seconds:6.2f} s  {note}".rstrip())
    print(
        f"ratio naive/assay: {naive_good_time / cold_time:.2f}x cold, "
        f"{naive_good_time / good_time:.2f}x warm (verified); "
        f"{naive_bad_time / bad_time:.2f}x warm (refuted)"
    )
    agree = (
        cold_out.status is Status.VERIFIED
        and good.status is Status.VERIFIED
        and naive_good is None
        and bad.status is Status.REFUTED
        and bad_clause == naive_bad
    )
    print("verdicts agree with the naive checker" if agree else "VERDICTS DISAGREE")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
