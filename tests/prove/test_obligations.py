"""The benchmark's own ground truth: every intended solution typechecks, every obligation holds
only holes, the manifest tags each one (term-mode ceiling, canary), and the canaries are false."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from assay.proofs import Judging, Terms, judge_source
from assay.prove import CLOSERS, load, read_manifest
from assay.prove._fixture import enclosing, imports, local_lemmas, nameable
from assay.prove._moves import MAX_ARITY

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "obligations"
MANIFEST = json.loads((FOLDER / "obligations.json").read_text())["obligations"]
SOLVED = sorted(name for name, entry in MANIFEST.items() if not entry["canary"])
CANARIES = sorted(name for name, entry in MANIFEST.items() if entry["canary"])
ALL = os.environ.get("ASSAY_ALL_OBLIGATIONS") == "1"
"""Each stdlib judgment costs 8-15 s with Debian's Agda here: the suite checks every fourth file
(a fixed sample across Nat, List, Bool and equality), and ``ASSAY_ALL_OBLIGATIONS=1`` checks them
all (run it when the benchmark changes; docs/prove.md)."""
CHECKED_SOLUTIONS = SOLVED if ALL else SOLVED[::4]
CHECKED_OBLIGATIONS = sorted(MANIFEST) if ALL else sorted(MANIFEST)[1::4]


def test_the_benchmark_has_its_size_and_tags() -> None:
    loaded = load(FOLDER)
    assert len(SOLVED) >= 20 and len(CANARIES) >= 3
    assert {name for name, _, _ in loaded} == set(MANIFEST)
    manifest = read_manifest(FOLDER)
    assert manifest is not None
    for name in SOLVED:
        entry = manifest.obligations[name]
        assert entry.single_term is not None, name
        assert entry.solution == f"solutions/{name}", name
        assert (FOLDER / entry.solution).is_file()
    for name in CANARIES:
        assert manifest.obligations[name].solution is None


def _filled_terms(obligation: str, solution: str) -> list[str] | None:
    """The terms the intended solution puts in the obligation's holes, when it changes nothing
    but the holes of one line (one clause); None when it is more (case splits, new lines)."""
    before, after = obligation.split("\n"), solution.split("\n")
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b]
    if len(before) != len(after) or len(changed) != 1 or "{! !}" not in before[changed[0]]:
        return None
    pattern = "(.+?)".join(re.escape(part) for part in before[changed[0]].split("{! !}"))
    match = re.fullmatch(pattern, after[changed[0]])
    return None if match is None else [term.strip() for term in match.groups()]


def _in_vocabulary(term: str, names: set[str], variables: list[str]) -> bool:
    """Whether the proposer can write ``term`` (``_moves.VOCABULARY``): a closer, a variable of
    the clause, or a name the fixture imports by name (or declares) bare, applied to
    underscores, or saturated with the clause's variables. The explicit arity, which the
    proposer reads from Agda, is not checked here: the fixed sweep is that evidence."""
    head, *arguments = term.split()
    if term in CLOSERS or (term in variables):
        return True
    if head not in names or not nameable(head) or len(arguments) > MAX_ARITY:
        return False
    return all(a == "_" for a in arguments) or all(a in variables for a in arguments)


@pytest.mark.parametrize("name", SOLVED)
def test_the_single_term_tag_says_whether_the_solution_is_a_vocabulary_term(name: str) -> None:
    """``single_term`` is the action space's ceiling, known before any run: true exactly when the
    intended solution fills each hole with one term the fixed proposer can write. NatSucCong's
    ``cong suc p`` is one term but applies a lemma to a constructor, outside the vocabulary."""
    obligation = (FOLDER / name).read_text()
    solution = (FOLDER / "solutions" / name).read_text()
    terms = _filled_terms(obligation, solution)
    (hole_line,) = {line for line in obligation.split("\n") if "{! !}" in line}
    variables = hole_line.split("=", 1)[0].split()[1:]
    names = {n for i in imports(obligation) for n in i.names}
    names |= set(local_lemmas(obligation, len(obligation), enclosing(obligation, len(obligation))))
    within = terms is not None and all(_in_vocabulary(t, names, variables) for t in terms)
    assert within is MANIFEST[name]["single_term"], (name, terms)


@pytest.mark.slow
@pytest.mark.parametrize("name", CHECKED_SOLUTIONS)
def test_each_intended_solution_typechecks(name: str, judging: Judging) -> None:
    """Under the pinned toolchain (the configured Agda): a green whole-file batch check."""
    source = (FOLDER / "solutions" / name).read_text()
    attempt = judge_source("agda", source, Terms(stdlib=True), judging)
    assert attempt.status == "solved", (name, attempt.diagnostics)


@pytest.mark.slow
@pytest.mark.parametrize("name", CHECKED_OBLIGATIONS)
def test_each_obligation_fails_only_on_its_holes(name: str, judging: Judging) -> None:
    """The obligation as given is well-formed: Agda's only complaint is its open holes."""
    source = (FOLDER / name).read_text()
    attempt = judge_source("agda", source, Terms(stdlib=True), judging)
    assert attempt.status == "progress", (name, attempt.diagnostics)
