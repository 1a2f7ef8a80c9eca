"""A toolchain crash the candidate provokes is a finding, not assay's failure (issue 15, item 4).

Agda 2.6.2.2 dies with an internal error (exit 154) on a header-less module reached through a
dotted module name; Coq 8.16 raises an anomaly (exit 129) on an Ltac2 primitive bound at the
wrong type. A proof the checker cannot check is not a proof: when a known-good canary still
checks on the same toolchain, the verdict is refuted with the reason; only when the canary fails
too is it ``error``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Config, Status
from assay.proofs import _canary, _judges, judge, plan_for
from assay.proofs._agda import agda_plan
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, Sandbox
from tests.helpers import run_kind
from tests.proofs.conftest import need

pytestmark = pytest.mark.slow
LIMITS = Limits(timeout=120, memory_mb=4096)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(backend="bwrap")


LTAC2 = "From Ltac2 Require Import Ltac2.\n"
COQ_CRASHES = {
    "ltac2_print_at_int": f'{LTAC2}Ltac2 @external bad : int -> unit := "ltac2" "print".\nLtac2 Eval bad 3.\n',
    "ltac2_constr_type_at_int": (
        f'{LTAC2}Ltac2 @external bad : int -> constr := "ltac2" "constr_type".\nLtac2 Eval bad 3.\n'
    ),
    "ltac2_in_a_proof": (
        f'{LTAC2}Ltac2 @external bad : int -> unit := "ltac2" "print".\n'
        "Goal True. bad 7. exact I. Qed.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(COQ_CRASHES))
@pytest.mark.parametrize(
    ("statement", "proof"),
    [("1 + 1 = 3", "Proof. Abort."), ("1 + 1 = 2", "Proof. reflexivity. Qed.")],
)
def test_a_coq_anomaly_the_solution_provokes_is_refuted(
    name: str, statement: str, proof: str, tmp_path: Path
) -> None:
    """Even with a correct proof beside it: the checker could not check the file."""
    need("coqc")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "Crash.v").write_text(f"{COQ_CRASHES[name]}Theorem two : {statement}.\n{proof}\n")
    outcome = run_kind(
        "coq",
        file="Crash.v",
        statement=statement,
        name="two",
        workspace=ws,
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    assert outcome.status is Status.REFUTED, outcome.detail
    assert "known-good proof checks" in outcome.detail, outcome.detail
    assert outcome.evidence is not None
    assert outcome.evidence["finding"] == "crashed" and outcome.evidence["exit_code"] == 129
    again = run_kind(
        "coq",
        file="Crash.v",
        statement=statement,
        name="two",
        workspace=ws,
        config=Config(judgment_cache=str(tmp_path / "cache")),
    )
    assert again.evidence is not None
    assert not again.evidence["cached"]  # a crash is never remembered as a finding


HEADERLESS = {
    "A/B.agda": "x : Set₁\nx = Set\n",
    "Deep/Er/Name.agda": "open import Agda.Builtin.Nat\nn : Nat\nn = 1\n",
    "P/Q.agda": "data T : Set where\n  t : T\n",
}


@pytest.mark.parametrize("path", sorted(HEADERLESS))
def test_an_agda_internal_error_is_refuted(path: str, sandbox: Sandbox) -> None:
    """A header-less module reached through a dotted name: ``__IMPOSSIBLE__``, exit 154."""
    need("agda")
    toolchain = _judges.toolchain_for("agda")
    module = path.removesuffix(".agda").replace("/", ".")
    files = {
        path: HEADERLESS[path].encode(),
        "AssayGoal.agda": f"module AssayGoal where\nimport {module} as S\n".encode(),
    }
    flags = ["--safe", "--no-libraries", "-i", "."]
    plan = Plan(files, [[toolchain.binary, *flags, "AssayGoal.agda"]], flags, "AssayGoal.agda", "")
    verdict = judge("agda", plan, sandbox, LIMITS).verdict
    assert verdict is not None and verdict.exit_code == 154, verdict
    assert verdict.finding == "crashed" and not verdict.green
    assert "known-good proof checks" in verdict.reason


def test_when_the_canary_fails_too_it_is_assays_error(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken toolchain (here /bin/sh standing in for agda: every run exits 2) is no finding."""
    broken = Toolchain("agda", "/bin/sh", "a broken toolchain", "none")
    monkeypatch.setattr(_judges, "toolchain_for", lambda language, config=None: broken)
    _canary.forget()
    solution = "module Solution where\nopen import Agda.Builtin.Nat\none : Nat\none = 1\n"
    plan = agda_plan(
        broken,
        solution,
        statement="Nat",
        name="one",
        header="open import Agda.Builtin.Nat",
        options=(),
        stdlib=False,
    )
    verdict = judge("agda", plan, sandbox, LIMITS).verdict
    assert verdict is not None and verdict.finding == "machinery" and verdict.limit is None
    assert "known-good proof fails on it too" in verdict.reason


def test_the_canary_is_remembered_per_toolchain(sandbox: Sandbox) -> None:
    need("coqc")
    _canary.forget()
    toolchain = _judges.toolchain_for("coq")
    assert _canary.canary_checks("coq", toolchain, sandbox, LIMITS)
    assert len(_canary._remembered) == 1
    assert _canary.canary_checks("coq", toolchain, sandbox, LIMITS)
    assert len(_canary._remembered) == 1
    plan = plan_for(
        "coq",
        "Theorem two : 1 + 1 = 2.\nProof. reflexivity. Qed.\n",
        statement="1 + 1 = 2",
        name="two",
    )
    assert judge("coq", plan, sandbox, LIMITS).verdict.green  # type: ignore[union-attr]
