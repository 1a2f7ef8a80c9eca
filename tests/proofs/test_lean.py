"""Lean: the judge is complete, but Lean cannot be installed on these machines.

Execution tests run wherever ``lake`` is on PATH and skip here with that reason. Here: the plan
(the four files and steps), the audit's reading (on output in the exact form the audit program
prints), the toolchain's reading of a project folder (with stand-ins for elan's ``lean`` and
``lake``, since the real ones cannot be installed), and the kind without a toolchain.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from assay import CheckContext, Status, build_check
from assay._errors import InvalidSpec, ToolchainMissing
from assay.proofs import _lean
from assay.proofs._lean import lean_assumptions, lean_plan
from assay.proofs._lean_audit import AUDIT_SOURCE
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain

NO_LAKE = "lake is not on PATH: Lean cannot be installed on this machine"
TOOLCHAIN = Toolchain(
    "lean",
    "/opt/lean/bin/lean",
    "Lean (version 4.9.0)",
    "core@0",
    search_path=("/opt/lean/lib/lean",),
    mounts=("/opt/lean",),
)


def plan_of(source: str = "theorem t : 1 = 1 := rfl\n", header: str = "") -> Plan:
    return lean_plan(TOOLCHAIN, source, statement="1 = 1", name="t", header=header)


def audit_output(
    plan: Plan, axioms: list[list[str]], imports: list[list[str]] | None = None
) -> str:
    """What the audit program prints for a clean run (see ``AUDIT_SOURCE``)."""
    marker = plan.marker
    solution_imports = imports if imports is not None else [["Init"]]
    lines = [
        f"{marker} begin {{}}",
        f"{marker} module " + json.dumps([["AssaySolution"], solution_imports]),
        f"{marker} module " + json.dumps([["AssayStatement"], [["Init"]]]),
        f"{marker} module "
        + json.dumps([["AssayGoal"], [["Init"], ["AssayStatement"], ["AssaySolution"]]]),
        f"{marker} replayed 3",
        *(f"{marker} axiom {json.dumps(name)}" for name in axioms),
        f"{marker} end {len(axioms)}",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("axioms", "read"),
    [
        ([], []),
        (
            [["propext"], ["Classical", "choice"], ["Quot", "sound"]],
            ["propext", "Classical.choice", "Quot.sound"],
        ),
        ([["sorryAx"]], ["sorryAx"]),
        ([["Lean", "ofReduceBool"]], ["Lean.ofReduceBool"]),
    ],
)
def test_the_audit_is_read_exactly(axioms: list[list[str]], read: list[str]) -> None:
    plan = plan_of()
    assert lean_assumptions(audit_output(plan, axioms), plan) == read


def test_lean_elaborating_the_trusted_audit_may_print_before_it_runs() -> None:
    plan = plan_of()
    warning = "AssayAudit.lean:12:4: warning: `Lean.HashMap` has been deprecated\n"
    assert lean_assumptions(warning + audit_output(plan, []), plan) == []


def test_the_plan_compiles_solution_statement_wrapper_and_audit(tmp_path: Path) -> None:
    (tmp_path / "Mathlib.olean").write_bytes(b"")
    library = dataclasses.replace(TOOLCHAIN, search_path=(*TOOLCHAIN.search_path, str(tmp_path)))
    plan = lean_plan(
        library,
        "theorem t : 1 = 1 := rfl\n",
        statement="1 = 1",
        name="t",
        header="import Mathlib\nopen Nat",
    )
    statement = plan.files["AssayStatement.lean"].decode()
    wrapper = plan.files["AssayGoal.lean"].decode()
    assert statement.startswith("import Mathlib\nopen Nat\n")
    assert "def _root_.AssayStatement.statement : Prop :=\n  (1 = 1\n  )" in statement
    assert wrapper == (
        "import AssayStatement\nimport AssaySolution\n\n"
        "theorem assay_goal : AssayStatement.statement := @_root_.t\n"
    )
    assert plan.files["AssayAudit.lean"] == AUDIT_SOURCE.encode()
    assert plan.steps[0] == [
        "env",
        f"LEAN_PATH=/opt/lean/lib/lean:{tmp_path}",
        "/opt/lean/bin/lean",
        "-o",
        "AssaySolution.olean",
        "AssaySolution.lean",
    ]
    assert plan.mounts == ("/opt/lean",)
    assert plan.target == "AssayGoal.lean"
    assert plan.expects is not None and plan.expects.header_imports == ("Mathlib",)


def test_a_header_import_the_library_lacks_is_a_missing_toolchain_not_a_finding() -> None:
    with pytest.raises(ToolchainMissing, match=r"Mathlib\.Tactic"):
        plan_of(header="import Mathlib.Tactic")


def test_each_trusted_step_checks_its_staged_bytes_first() -> None:
    plan = plan_of()
    for step, module in zip(
        plan.steps[1:], ("AssayStatement", "AssayGoal", "AssayAudit"), strict=True
    ):
        digest = hashlib.sha256(plan.files[f"{module}.lean"]).hexdigest()
        assert step[:2] == ["sh", "-c"]
        assert step[2].startswith(f"echo '{digest}  {module}.lean' | sha256sum -c --status -")


def test_the_kind_refuses_a_name_that_is_not_a_plain_lean_name() -> None:
    for name in ("«x y»", "t := sorry", "a b", "t\ntheorem"):
        with pytest.raises(InvalidSpec):
            build_check({"kind": "lean", "file": "x.lean", "statement": "1 = 1", "name": name})


def test_without_lake_the_kind_is_inconclusive_and_says_why(tmp_path: Path) -> None:
    if shutil.which("lake") is not None:
        pytest.skip("lake is installed here; the execution tests below cover it")
    check = build_check({"kind": "lean", "file": "x.lean", "statement": "1 = 1", "name": "t"})
    (tmp_path / "x.lean").write_text("theorem t : 1 = 1 := rfl\n")
    outcome = check.run(CheckContext(workspace=tmp_path))
    assert outcome.status is Status.INCONCLUSIVE
    assert "lake is not installed" in outcome.detail


def test_sorry_is_refused_before_any_judgment(tmp_path: Path) -> None:
    (tmp_path / "x.lean").write_text("theorem t : 1 = 2 := by sorry\n")
    check = build_check({"kind": "lean", "file": "x.lean", "statement": "1 = 2", "name": "t"})
    outcome = check.run(CheckContext(workspace=tmp_path))
    assert outcome.status is Status.REFUTED  # no toolchain is needed to refuse a shape
    assert "`sorry`" in outcome.detail


def test_an_import_the_header_allows_is_not_refused(tmp_path: Path) -> None:
    (tmp_path / "x.lean").write_text("import Mathlib\ntheorem t : 1 = 2 := by sorry\n")
    spec = {"kind": "lean", "file": "x.lean", "statement": "1 = 2", "name": "t"}
    allowed = build_check({**spec, "header": "import Mathlib"}).run(
        CheckContext(workspace=tmp_path)
    )
    refused = build_check(spec).run(CheckContext(workspace=tmp_path))
    assert "import `Mathlib`" not in allowed.detail
    assert "the import `Mathlib`" in refused.detail


# --- The toolchain: read in the project folder -------------------------------------------
# Stand-ins for elan's proxies (the real ones cannot be installed here): like elan, the `lean`
# stand-in answers for the toolchain the *current folder's* `lean-toolchain` names.

LEAN_STANDIN = """#!/bin/sh
toolchain=$(cat lean-toolchain 2>/dev/null || echo default)
case "$1" in
  --print-prefix) echo "$PREFIX_ROOT/$toolchain" ;;
esac
"""
REAL_LEAN = """#!/bin/sh
echo "Lean (version from $(basename "$(dirname "$(dirname "$0")")"))"
"""
LAKE_STANDIN = """#!/bin/sh
[ "$1 $2 $3" = "env printenv LEAN_PATH" ] && echo "$PWD/.lake/build/lib"
"""


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    _executable(bin_dir / "lean", LEAN_STANDIN)
    _executable(bin_dir / "lake", LAKE_STANDIN)
    for toolchain in ("default", "v4.9.0"):
        _executable(tmp_path / "toolchains" / toolchain / "bin" / "lean", REAL_LEAN)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PREFIX_ROOT", str(tmp_path / "toolchains"))
    return tmp_path


def test_the_version_and_library_are_read_in_the_project_folder(standins: Path) -> None:
    project = standins / "project"
    (project / ".lake" / "build" / "lib").mkdir(parents=True)
    (project / "lean-toolchain").write_text("v4.9.0")
    (project / "lake-manifest.json").write_text('{"packages": []}')
    found = _lean.lean_in(project)
    assert found is not None
    assert found.version == "Lean (version from v4.9.0)"  # not the default toolchain's
    assert found.binary == str(standins / "toolchains" / "v4.9.0" / "bin" / "lean")
    assert found.search_path[0] == str(project / ".lake" / "build" / "lib")
    assert str(standins / "toolchains" / "v4.9.0") in found.mounts
    core = _lean.lean_in(None)
    assert core is not None and core.version == "Lean (version from default)"


def test_the_library_identity_changes_with_the_manifest_and_the_built_files(
    standins: Path,
) -> None:
    project = standins / "project"
    lib = project / ".lake" / "build" / "lib"
    lib.mkdir(parents=True)
    (project / "lean-toolchain").write_text("v4.9.0")
    (project / "lake-manifest.json").write_text('{"packages": []}')
    identities = []
    for change in (
        lambda: None,
        lambda: (project / "lake-manifest.json").write_text('{"packages": ["mathlib"]}'),
        lambda: (lib / "Foo.olean").write_bytes(b"x"),
    ):
        change()
        found = _lean.lean_in(project)
        assert found is not None
        identities.append(found.library)
    assert len(set(identities)) == 3
    assert all(identity != "lake" for identity in identities)


@pytest.mark.skipif(shutil.which("lake") is None, reason=NO_LAKE)
def test_lean_judges_a_real_proof(tmp_path: Path) -> None:
    (tmp_path / "x.lean").write_text("theorem t (n m : Nat) : n + m = m + n := Nat.add_comm n m\n")
    check = build_check(
        {"kind": "lean", "file": "x.lean", "statement": "∀ (n m : Nat), n + m = m + n", "name": "t"}
    )
    assert check.run(CheckContext(workspace=tmp_path)).status is Status.VERIFIED


@pytest.mark.skipif(shutil.which("lake") is None, reason=NO_LAKE)
def test_lean_refutes_a_proof_of_another_statement(tmp_path: Path) -> None:
    (tmp_path / "x.lean").write_text("theorem t : 1 + 1 = 2 := rfl\n")
    check = build_check({"kind": "lean", "file": "x.lean", "statement": "2 + 2 = 4", "name": "t"})
    assert check.run(CheckContext(workspace=tmp_path)).status is Status.REFUTED
