"""``sat_assignment``: every status, the named problems, and agreement with a naive checker."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from assay import Outcome, Status
from assay.checks._kinds import _sat
from tests.helpers import run_kind

V, R, I, E = Status.VERIFIED, Status.REFUTED, Status.INCONCLUSIVE, Status.ERROR

FORMULA = """c (x1 or not x2) and (x2 or x3) and (not x1 or not x3) and (x1 or x2)
p cnf 3 4
1 -2 0
2 3 0
-1 -3 0
1 2 0
"""


def check(tmp_path: Path, assignment: str | bytes, formula: str | bytes = FORMULA) -> Outcome:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    raw = assignment.encode() if isinstance(assignment, str) else assignment
    (ws / "assignment.txt").write_bytes(raw)
    (tmp_path / "f.cnf").write_bytes(formula.encode() if isinstance(formula, str) else formula)
    return run_kind(
        "sat_assignment",
        workspace=ws,
        base_dir=tmp_path,
        artifact="assignment.txt",
        formula="f.cnf",
    )


ASSIGNMENTS: list[tuple[str, Status, str]] = [
    ("s SATISFIABLE\nv 1 2 -3 0\n", V, "satisfies all 4 clauses"),
    ("v 1 2 -3 0", V, "satisfies all 4 clauses"),
    ("c found by hand\nv 1 2\nv -3 0\n", V, "satisfies"),
    ("v 1 2 -3 0\nc a comment after the list\n", V, "satisfies"),
    ("v 1 2 -3 0\r\n", V, "satisfies"),
    ("v\t1\t2\t-3\t0", V, "satisfies"),
    ("\n\nv 1 1 2 -3 0\n\n", V, "satisfies"),
    ("v 1 -2 -3 0", R, "clause 2 (line 4 of the formula: 2 3) is not satisfied"),
    ("v 1 2 3 0", R, "clause 3 (line 5 of the formula: -1 -3) is not satisfied"),
    ("v 1 0", R, "clause 2 (line 4 of the formula: 2 3)"),
    ("v 0", R, "clause 1 (line 3 of the formula: 1 -2)"),
    ("s UNSATISFIABLE\n", R, "the status line says 's UNSATISFIABLE'"),
    ("s UNKNOWN\nv 1 2 -3 0\n", R, "line 1: the status line says 's UNKNOWN'"),
    ("s SATISFIABLE\ns SATISFIABLE\nv 1 2 -3 0", R, "line 2: a second 's' line"),
    ("v 1 -1 2 -3 0", R, "variable 1 is given both ways (1 and -1)"),
    ("v 1 2 -3", R, "do not end with the terminating 0"),
    ("v 1 2 -3 0 1", R, "line 1: '1' comes after the terminating 0"),
    ("v 1 0\nv 2 -3 0", R, "line 2: '2' comes after the terminating 0 (line 1)"),
    ("v 1 2 -3 4 0", R, "line 1: literal 4 is out of range (the formula has 3 variables)"),
    ("v 1 2 -3 -4 0", R, "literal -4 is out of range"),
    ("v 1 2 x 0", R, "line 1: 'x' is not a literal"),
    ("1 2 -3 0", R, "line 1: expected a 'c', 's' or 'v' line, found '1 2 -3 0'"),
    ("v1 2 -3 0", R, "expected a 'c', 's' or 'v' line"),
    ("", R, "there is no 'v' line"),
    ("c nothing\ns SATISFIABLE\n", R, "there is no 'v' line"),
]


@pytest.mark.parametrize(("assignment", "status", "detail"), ASSIGNMENTS)
def test_assignments(tmp_path: Path, assignment: str, status: Status, detail: str) -> None:
    out = check(tmp_path, assignment)
    assert out.status is status, out.detail
    assert detail in out.detail
    assert out.evidence is not None
    assert len(out.evidence["formula_sha256"]) == len(out.evidence["artifact_sha256"]) == 64


def test_the_unsatisfied_clause_is_evidence(tmp_path: Path) -> None:
    out = check(tmp_path, "v -1 -2 3 0")
    assert out.status is R
    assert out.evidence is not None
    assert out.evidence["clause"] == 4
    assert out.evidence["line"] == 6
    assert out.evidence["literals"] == [1, 2]
    assert out.evidence["variables"] == 3 and out.evidence["clauses"] == 4


FORMULAS: list[tuple[str, str, Status, str]] = [
    ("1 2 0\n", "v 1 0", I, "line 1: expected the 'p cnf VARIABLES CLAUSES' header first"),
    ("c only a comment\n", "v 1 0", I, "there is no 'p cnf VARIABLES CLAUSES' header"),
    ("p cnf 3\n1 0\n", "v 1 0", I, "line 1: the header must be 'p cnf VARIABLES CLAUSES'"),
    ("p dnf 3 1\n1 0\n", "v 1 0", I, "the header must be"),
    ("p cnf 3 01\n1 0\n", "v 1 0", I, "the header must be"),
    ("p cnf -3 1\n1 0\n", "v 1 0", I, "the header must be"),
    ("p cnf 3 2\n1 2 0\n", "v 1 0", I, "the header declares 2 clauses; the formula has 1"),
    ("p cnf 3 1\n1 2 0\n3 0\n", "v 1 0", I, "the header declares 1 clauses; the formula has 2"),
    ("p cnf 3 1\n1 4 0\n", "v 1 0", I, "line 2: literal 4 is outside the header's 3 variables"),
    ("p cnf 3 1\n1 -4 0\n", "v 1 0", I, "literal -4 is outside"),
    ("p cnf 3 1\n1 2\n", "v 1 0", I, "line 2: the last clause has no terminating 0"),
    ("p cnf 3 1\n1 x 0\n", "v 1 0", I, "line 2: unexpected 'x'"),
    ("p cnf 3 1\n1 02 0\n", "v 1 0", I, "line 2: '02' is not a literal"),
    ("p cnf 3 1\n01 2 0\n", "v 1 0", I, "line 2: '01' is not a literal"),
    ("p cnf 3 1\n-1 2 0\n", "v 2 0", V, "all 1 clauses"),
    ("p cnf 3 1\n1 4 0\n", "v 4 0", I, "literal 4 is outside the header's 3 variables"),
    ("p cnf 3 2\n1 2 0\n", "v x 0", I, "the header declares 2 clauses"),
    ("p cnf 3 1\n1 -0 0\n", "v 1 0", I, "'-0' is not a literal"),
    ("p cnf 3 1\n1 2 -\n0\n", "v 1 0", I, "'-' is not a literal"),
    ("p cnf 3 1\n1 2-3 0\n", "v 1 0", I, "'2-3' is not a literal"),
    ("p cnf 3 1\np cnf 3 1\n1 0\n", "v 1 0", I, "line 2: unexpected 'p'"),
    (f"p cnf {_sat.MAX_VARIABLES + 1} 1\n1 0\n", "v 1 0", I, "variables are not supported"),
    ("p cnf 3 1\nc a comment between clauses\n1 2 0\n", "v 1 0", V, "all 1 clauses"),
    ("c\nc\n  p   cnf  3 1 \n 1 2 0\n", "v 2 0", V, "all 1 clauses"),
    ("p cnf 3 1\n1 2 0\n%\n0\n", "v 1 0", V, "all 1 clauses"),
    ("p cnf 3 2\n1 0\n0\n", "v 1 0", R, "clause 2 (line 3 of the formula: the empty clause)"),
    ("p cnf 3 1\n1\n2\n0\n", "v -1 -2 0", R, "clause 1 (line 2 of the formula: 1 2)"),
    ("p cnf 3 2\n1 0 2\n0\n", "v 1 0", R, "clause 2 (line 2 of the formula: 2)"),
    ("p cnf 0 0\n", "v 0", V, "all 0 clauses"),
    ("c x\nc y\np cnf 2 2\nc z\n1 0\nc w\n2 0\n", "v 1 -2 0", R, "clause 2 (line 7"),
]


@pytest.mark.parametrize(("formula", "assignment", "status", "detail"), FORMULAS)
def test_formulas(
    tmp_path: Path, formula: str, assignment: str, status: Status, detail: str
) -> None:
    out = check(tmp_path, assignment, formula)
    assert out.status is status, out.detail
    assert detail in out.detail
    if status is I:
        assert out.detail.startswith("the formula 'f.cnf' cannot be read: ")


def test_missing_inputs(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "f.cnf").write_text(FORMULA)
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a",
        formula="f.cnf",
    )
    assert out.status is R and "'a' does not exist in the workspace" in out.detail
    (tmp_path / "ws" / "a").write_text("v 1 2 -3 0")
    out = run_kind(
        "sat_assignment", workspace=tmp_path / "ws", base_dir=tmp_path, artifact="a", formula="g"
    )
    assert out.status is I and "the formula 'g': cannot read" in out.detail
    out = run_kind("sat_assignment", base_dir=tmp_path, artifact="a", formula="f.cnf")
    assert out.status is I and "no workspace" in out.detail
    (tmp_path / "fifo").mkdir()
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a",
        formula="fifo",
    )
    assert out.status is I and "not a regular file" in out.detail


def test_escapes_and_workspace_formula(tmp_path: Path) -> None:
    out = check(tmp_path, "v 1 2 -3 0")
    assert out.status is V
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="../f.cnf",
        formula="f.cnf",
    )
    assert out.status is R and "escapes the workspace" in out.detail
    (tmp_path / "ws" / "f.cnf").write_text(FORMULA)
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="assignment.txt",
        formula="ws/f.cnf",
    )
    assert out.status is E and "inside the agent's workspace" in out.detail


def test_the_artifact_is_capped(tmp_path: Path) -> None:
    from assay import Config

    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a").write_text("v " + "1 " * 600 + "0")
    (tmp_path / "f.cnf").write_text(FORMULA)
    out = run_kind(
        "sat_assignment",
        workspace=tmp_path / "ws",
        base_dir=tmp_path,
        artifact="a",
        formula="f.cnf",
        config=Config(max_file_bytes=1000),
    )
    assert out.status is R and "larger than the 1000 byte read limit" in out.detail


# ---- agreement with a naive checker, on many random instances ----


def naive(formula: list[list[int]], assignment: list[int]) -> int | None:
    """The 1-based index of the first clause with no true literal, or None."""
    true = set(assignment)
    for index, clause in enumerate(formula, start=1):
        if not any(literal in true for literal in clause):
            return index
    return None


def render(rng: random.Random, variables: int, clauses: list[list[int]]) -> tuple[str, list[int]]:
    """DIMACS with comments, clauses split across lines and several on one line; and the line
    each clause starts on."""
    out = [f"c seed-made\np cnf {variables} {len(clauses)}\n"]
    lines = 3
    starts = []
    for clause in clauses:
        if rng.random() < 0.1:
            out.append("\nc between\n")
            lines += 2
        starts.append(lines)
        for token in [*map(str, clause), "0"]:
            gap = rng.choice([" ", " ", "  ", "\t", "\n"])
            out.append(token + gap)
            lines += gap == "\n"
    return "".join(out) + "\n", starts


@pytest.mark.parametrize("seed", range(120))
def test_agrees_with_a_naive_checker(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    variables = rng.randint(1, 12)
    clauses = [
        [rng.choice([-1, 1]) * rng.randint(1, variables) for _ in range(rng.randint(0, 4))]
        for _ in range(rng.randint(0, 30))
    ]
    picked = rng.sample(range(1, variables + 1), rng.randint(0, variables))
    assignment = [v if rng.random() < 0.5 else -v for v in picked]
    text = "v " + " ".join(map(str, assignment)) + " 0\n"
    formula, starts = render(rng, variables, clauses)
    out = check(tmp_path, text, formula)
    first = naive(clauses, assignment)
    if first is None:
        assert out.status is V, out.detail
    else:
        assert out.status is R, out.detail
        assert out.evidence is not None
        assert out.evidence["clause"] == first
        assert out.evidence["literals"] == clauses[first - 1]
        assert out.evidence["line"] == starts[first - 1]


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_chunk_boundaries_do_not_matter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(_sat, "_CHUNK", chunk)
    rng = random.Random(chunk)
    variables = 20
    clauses = [
        [rng.choice([-1, 1]) * rng.randint(1, variables) for _ in range(3)] for _ in range(80)
    ]
    for trial in range(5):
        assignment = [v if rng.random() < 0.5 else -v for v in range(1, variables + 1)]
        text = "v " + " ".join(map(str, assignment)) + " 0\n"
        formula, starts = render(rng, variables, clauses)
        out = check(tmp_path, text, formula)
        first = naive(clauses, assignment)
        assert (out.evidence or {}).get("clause") == first, (trial, out.detail)
        if first is not None:
            assert out.evidence is not None
            assert out.evidence["literals"] == clauses[first - 1]
            assert out.evidence["line"] == starts[first - 1]


def test_a_long_clause_is_shortened_in_the_detail(tmp_path: Path) -> None:
    clause = list(range(1, 101))
    formula = "p cnf 100 1\n" + " ".join(map(str, clause)) + " 0\n"
    out = check(tmp_path, "v " + " ".join(str(-v) for v in clause) + " 0", formula)
    assert out.status is R
    assert "1 2 3" in out.detail and "..." in out.detail
    evidence: dict[str, Any] = out.evidence or {}
    assert evidence["literal_count"] == 100 and len(evidence["literals"]) == 64


def test_the_benchmark_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    try:
        import sat
    finally:
        sys.path.pop(0)
    assert sat.main(["--clauses", "3000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "verdicts agree with the naive checker" in out
    assert "ratio naive/assay" in out


def test_a_parsed_formula_is_reused_only_for_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sat, "_CACHE", type(_sat._CACHE)())
    first = check(tmp_path, "v 1 2 -3 0")
    again = check(tmp_path, "v 1 2 -3 0")
    assert first.status is again.status is V
    assert len(_sat._CACHE) == 1
    # The same path, other bytes: read anew, never the cached formula.
    changed = FORMULA.replace("1 2 0\n", "-2 0\n")
    out = check(tmp_path, "v 1 2 -3 0", changed)
    assert out.status is R and "clause 4 (line 6 of the formula: -2)" in out.detail
    assert len(_sat._CACHE) == 2
    broken = check(tmp_path, "v 1 2 -3 0", FORMULA + "4 0\n")
    assert broken.status is I and len(_sat._CACHE) == 2


def test_the_cache_keeps_at_most_its_literals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sat, "_CACHE", type(_sat._CACHE)())
    monkeypatch.setattr(_sat, "CACHE_LITERALS", 30)
    for clauses in range(1, 8):
        formula = f"p cnf 3 {clauses}\n" + "1 2 0\n" * clauses
        assert check(tmp_path, "v 1 0", formula).status is V
        assert sum(len(f.literals) for f in _sat._CACHE.values()) <= 30
    big = "p cnf 3 20\n" + "1 2 0\n" * 20
    assert check(tmp_path, "v -1 -2 0", big).status is R
    assert all(len(f.literals) < 60 for f in _sat._CACHE.values())
