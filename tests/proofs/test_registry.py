"""A proof language is one module: the registry drives ``Language``, the kinds and every dispatch.

A fake language registered for one test (no toolchain, no sandbox run) must be what the judge's
generic parts call: its toolchain, refusals, plan, canary, reading of exits, audit, holes. And
no generic module may branch on a language's name (checked on their syntax trees), so a fourth
language needs no edit outside its own module and the registry.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import get_args

import pytest

import assay.proofs
from assay import Config, InvalidSpec, build_check
from assay._config import DEFAULT_CONFIG
from assay.checks import get_kind
from assay.proofs import (
    LANGUAGES,
    Language,
    ProofLanguage,
    _canary,
    _judges,
    _reading,
    _registry,
    judge_hole,
    plan_for,
    refusals_for,
)
from assay.proofs._batch import Batch
from assay.proofs._fill import Judging, Terms
from assay.proofs._holes import marker_at, marker_holes
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, RunResult, Sandbox

SRC = Path(assay.proofs.__file__).parent
GENERIC = [
    SRC / "_judges.py",
    SRC / "_reading.py",
    SRC / "_canary.py",
    SRC / "_fill.py",
    SRC / "_holes.py",
    SRC / "_batch.py",
    SRC / "_plan.py",
    SRC / "_cache.py",
    SRC / "_verdict.py",
    SRC.parent / "checks" / "_kinds" / "_proofs.py",
]


def test_language_is_the_registry() -> None:
    assert set(get_args(Language)) == set(LANGUAGES) == {"agda", "coq", "lean"}
    for name, language in LANGUAGES.items():
        assert language.name == name
        assert isinstance(language.kind_doc, str) and language.kind_doc.strip()


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_every_registered_language_has_its_kind(name: str) -> None:
    found = get_kind(name)
    assert found is not None, name
    assert found.doc.split()[:3] == LANGUAGES[name].kind_doc.split()[:3]
    spec = found.spec.model_json_schema()["properties"]
    assert {"file", "obligation", "statement", "name", "timeout", "memory_mb"} <= set(spec)


def test_the_kinds_ask_the_language_what_a_spec_needs() -> None:
    """Coq and Lean always need the statement; Agda only for a whole file; Lean checks names."""
    for name in ("coq", "lean"):
        with pytest.raises(InvalidSpec, match="'statement' and 'name' are required"):
            build_check({"kind": name, "obligation": "o.txt"})
    build_check({"kind": "agda", "obligation": "o.agda"})
    with pytest.raises(InvalidSpec, match="whole-file proof needs"):
        build_check({"kind": "agda", "file": "S.agda"})
    with pytest.raises(InvalidSpec, match="not a plain Lean name"):
        build_check({"kind": "lean", "file": "S.lean", "statement": "True", "name": "a b"})


def _comparisons_with_names(path: Path) -> list[str]:
    """Every ``x == "agda"``-style comparison and every dict keyed by language names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                values = operand.elts if isinstance(operand, ast.Tuple | ast.Set) else [operand]
                found += [
                    f"{path.name}:{node.lineno}"
                    for value in values
                    if isinstance(value, ast.Constant) and value.value in LANGUAGES
                ]
        elif isinstance(node, ast.Dict):
            found += [
                f"{path.name}:{node.lineno}"
                for key in node.keys
                if isinstance(key, ast.Constant) and key.value in LANGUAGES
            ]
    return found


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: p.name)
def test_generic_code_never_branches_on_a_language_name(path: Path) -> None:
    assert _comparisons_with_names(path) == []


def test_the_branch_detector_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('def f(x):\n    return x == "coq" or {"lean": 1}\n')
    assert _comparisons_with_names(bad) == ["bad.py:2", "bad.py:2"]


# --- a fake fourth language, registered for one test -----------------------------------------

FAKE_TOOLCHAIN = Toolchain("fake", "/bin/fake", "fake 1.0", "fake-library@0")


class Fake:
    """A language that never runs: every member records that the generic code called it."""

    name = "fake"
    install_hint = "fakec"
    statement_required = False
    parenthesize = False
    sandbox_paths: tuple[str, ...] = ()
    statement_step: int | None = None
    kind_doc = "Fake checks nothing."

    def __init__(self) -> None:
        self.calls: list[str] = []

    def toolchain(self, config: Config) -> Toolchain | None:
        self.calls.append("toolchain")
        return FAKE_TOOLCHAIN

    def refusals(
        self,
        source: str,
        header: str = "",
        options: Sequence[str] = (),
        config: Config = DEFAULT_CONFIG,
        obligation: bool = False,
    ) -> list[str]:
        self.calls.append("refusals")
        return ["`forbidden`"] if "forbidden" in source else []

    def candidate_refusals(self, candidate: str) -> list[str]:
        self.calls.append("candidate_refusals")
        return ["a bad candidate"] if candidate == "bad" else []

    def holes(self, text: str) -> list[tuple[int, int]]:
        return marker_holes(text)

    def hole_at(self, text: str, line: int, column: int) -> tuple[int, int]:
        return marker_at(text, line, column)

    def terms_problem(self, name: str | None, header: str) -> str | None:
        return None

    def plan(
        self,
        toolchain: Toolchain,
        solution: str,
        *,
        statement: str | None,
        name: str | None,
        header: str,
        options: Sequence[str],
        stdlib: bool,
    ) -> Plan:
        self.calls.append("plan")
        return Plan({"S.fake": solution.encode()}, [[toolchain.binary, "S.fake"]], [], "S.fake", "")

    def canary(self, toolchain: Toolchain) -> Plan:
        self.calls.append("canary")
        return self.plan(
            toolchain, "ok", statement=None, name=None, header="", options=(), stdlib=False
        )

    def tampering(self, runs: Sequence[RunResult]) -> str | None:
        self.calls.append("tampering")
        return None

    def trusted_failure(self, runs: Sequence[RunResult]) -> str | None:
        self.calls.append("trusted_failure")
        return None

    def does_not_check(self, exit_code: int | None) -> bool:
        self.calls.append("does_not_check")
        return exit_code == 7

    def audit(
        self, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
    ) -> tuple[bool, list[str]]:
        self.calls.append("audit")
        return False, ["fake.axiom"]

    def remaining_holes(self, output: str) -> int | None:
        return None

    def shown(self, line: str) -> bool:
        return True


def _run(exit_code: int) -> RunResult:
    return RunResult(
        exit_code=exit_code,
        signal=None,
        output="",
        output_bytes=0,
        truncated=False,
        elapsed=0.1,
        isolation="bwrap",
    )


def test_a_fake_language_is_dispatched_to_by_the_registry_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = Fake()
    as_language: ProofLanguage = fake  # the interface is all a language implements
    monkeypatch.setitem(_registry.LANGUAGES, "fake", as_language)
    name: Language = "fake"  # type: ignore[assignment]  # registered just above

    assert refusals_for(name, "forbidden") == ["`forbidden`"]
    plan = plan_for(name, "proof")
    assert plan.files == {"S.fake": b"proof"} and plan.steps == [["/bin/fake", "S.fake"]]
    assert _judges.toolchain_for(name) is FAKE_TOOLCHAIN
    assert _canary.canary_plan(name, FAKE_TOOLCHAIN).files == {"S.fake": b"ok"}

    def read(exit_code: int) -> _reading.Reading:
        batch = Batch([_run(exit_code)], 1, True, {})
        return _reading.read_batch(name, plan, batch, (), Limits())

    assert read(7).finding == "does_not_check"  # the fake's own "does not check" exit
    assert read(1).finding == "machinery" and read(1).broke  # not the fake's: a broken run
    checked = read(0)
    assert (checked.finding, checked.green, checked.assumptions) == (
        "checks",
        False,
        ["fake.axiom"],
    )

    # the one hole path: a refused candidate and a refused filled file never reach a toolchain
    judging = Judging(Sandbox(backend="local", allow_unisolated=True))
    refused = judge_hole(name, "x = {! !}", (4, 9), "bad", Terms(), judging)
    assert (refused.status, refused.refusals, refused.verdict) == (
        "refused",
        ["a bad candidate"],
        None,
    )
    blocked = judge_hole(name, "x = {! !}", (4, 9), "forbidden", Terms(), judging)
    assert (blocked.status, blocked.refusals) == ("refused", ["`forbidden`"])
    for member in ("refusals", "plan", "toolchain", "canary", "tampering", "does_not_check",
                   "audit", "trusted_failure", "candidate_refusals"):  # fmt: skip
        assert member in fake.calls, member


def test_an_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="no proof language 'cobol'"):
        refusals_for("cobol", "x")  # type: ignore[arg-type]
