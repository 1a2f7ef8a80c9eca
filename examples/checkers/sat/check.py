"""A SAT-assignment checker over the assay /input,/output protocol (standard library only).

Reads the DIMACS CNF instance bound as reference key "instance" and the assignment submitted as
artifact role "assignment" (whitespace-separated non-zero integers, e.g. "1 -2 3", optionally
ending in 0), and writes /output/result.json:
  verified      every clause has a true literal;
  refuted       the assignment is malformed, contradicts itself, leaves a variable unassigned,
                or leaves a clause false (the first such clause is named);
  inconclusive  the instance itself cannot be read.
"""

import json
import os
import sys
from pathlib import Path

INPUT, OUTPUT = Path("/input"), Path("/output")


def conclude(result, summary, **extra):
    (OUTPUT / "result.json").write_text(json.dumps({"result": result, "summary": summary, **extra}))
    sys.exit(0)


def only_file(folder):
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return files[0] if len(files) == 1 else None


def read_instance(path):
    clauses, current, declared = [], [], None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("c") or line.startswith("%"):
            continue
        if line.startswith("p"):
            parts = line.split()
            declared = int(parts[2])
            continue
        for token in line.split():
            literal = int(token)
            if literal == 0:
                clauses.append(current)
                current = []
            else:
                current.append(literal)
    if current:
        clauses.append(current)
    if declared is None:
        raise ValueError("no 'p cnf' header")
    return declared, clauses


def main():
    instance = only_file(INPUT / "reference" / "instance")
    if instance is None:
        conclude("inconclusive", "exactly one instance file is required under reference/instance")
    try:
        variables, clauses = read_instance(instance)
    except (ValueError, IndexError) as exc:
        conclude("inconclusive", f"the instance cannot be read: {exc}")
    submitted = only_file(INPUT / "artifacts" / "assignment")
    if submitted is None:
        conclude("refuted", "submit exactly one assignment file")
    try:
        literals = [int(t) for t in submitted.read_text().split()]
    except ValueError:
        conclude("refuted", "the assignment must be whitespace-separated integers, like '1 -2 3 0'")
    literals = [x for x in literals if x != 0]
    values = {}
    for literal in literals:
        variable = abs(literal)
        if variable > variables:
            conclude(
                "refuted", f"variable {variable} does not exist (the instance has {variables})"
            )
        if values.get(variable, literal > 0) != (literal > 0):
            conclude("refuted", f"variable {variable} is assigned both true and false")
        values[variable] = literal > 0
    missing = [v for v in range(1, variables + 1) if v not in values]
    if missing:
        conclude("refuted", f"{len(missing)} variable(s) unassigned, first: {missing[0]}")
    for number, clause in enumerate(clauses, start=1):
        if not any(values[abs(x)] == (x > 0) for x in clause):
            conclude(
                "refuted", f"clause {number} ({' '.join(map(str, clause))}) is false", clause=number
            )
    os.makedirs(OUTPUT / "evidence", exist_ok=True)
    (OUTPUT / "evidence" / "checked.txt").write_text(f"{len(clauses)} clauses satisfied\n")
    conclude("verified", f"all {len(clauses)} clauses are satisfied")


main()
