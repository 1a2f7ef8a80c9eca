"""Hack class: an assignment that claims more than one assignment can, to satisfy every clause.

Listing every literal both ways makes every clause "contain a true literal" to a checker that only
looks up literals; a ``0`` in the middle followed by more literals hides a second list behind the
first; a claim of unsatisfiability or of nothing at all must not pass either. Each is refuted, by
name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Status
from tests.helpers import run_kind

# (x1 or x2) and (not x1 or x2) and (x1 or not x2) and (not x1 or not x2): unsatisfiable.
UNSAT = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n"
SAT = "p cnf 3 3\n1 2 0\n-1 3 0\n-2 -3 0\n"


def judge(tmp_path: Path, assignment: str, formula: str) -> tuple[Status, str]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text(assignment)
    (tmp_path / "f.cnf").write_text(formula)
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a.txt",
        formula="f.cnf",
    )
    return out.status, out.detail


CASES = [
    ("v 1 -1 2 -2 0", UNSAT, "variable 1 is given both ways"),
    ("v 1 2 -1 -2 0", UNSAT, "variable 1 is given both ways"),
    ("v -2 2 0", UNSAT, "variable 2 is given both ways"),
    ("v 1 2 3 -1 -2 -3 0", SAT, "variable 1 is given both ways"),
    ("v 1\nv 2\nv -1\nv -2\nv 0", UNSAT, "variable 1 is given both ways"),
    ("v 1 -2 0 -1 2 0", UNSAT, "'-1' comes after the terminating 0"),
    ("v 1 -2 0 2", UNSAT, "'2' comes after the terminating 0"),
    ("v 1 0\nv -1 0", UNSAT, "line 2: '-1' comes after the terminating 0 (line 1)"),
    ("v 1 -3 0\nv 2 0", SAT, "comes after the terminating 0"),
    ("v 0 1 -3 0", SAT, "'1' comes after the terminating 0"),
    ("s UNSATISFIABLE", UNSAT, "the status line says 's UNSATISFIABLE'"),
    ("s UNSATISFIABLE\nv 1 2 0", UNSAT, "'s UNSATISFIABLE'"),
    ("s SATISFIABLE", SAT, "there is no 'v' line"),
    ("s SATISFIABLE\nv 0", SAT, "clause 1"),
    ("v 1 0", SAT, "clause 2 (line 3 of the formula: -1 3)"),
    ("v 1 2 0", UNSAT, "clause 4 (line 5 of the formula: -1 -2)"),
    ("v " + " ".join(map(str, range(1, 4))) + " 0", SAT, "clause 3"),
]


@pytest.mark.parametrize(("assignment", "formula", "detail"), CASES)
def test_overclaiming_is_refuted(
    tmp_path: Path, assignment: str, formula: str, detail: str
) -> None:
    status, said = judge(tmp_path, assignment, formula)
    assert status is Status.REFUTED, said
    assert detail in said


def test_an_honest_assignment_passes(tmp_path: Path) -> None:
    assert judge(tmp_path, "s SATISFIABLE\nv 1 -2 3 0\n", SAT)[0] is Status.VERIFIED
