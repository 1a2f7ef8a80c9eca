"""Lean: tricks against the scan, the statement's meaning and the axiom audit (issue 17, item 1).

Lean cannot be installed on this machine, so three layers are tested here without it:

* the scan (read by tokens: strings, interpolations, raw strings, characters, nested comments,
  «names»), on each trick and on legitimate proofs that must pass;
* the plan: the statement is elaborated in a module that never sees the solution, the wrapper
  names the solution's theorem from the root, the trusted steps check their staged bytes, no
  ``lake`` runs in the folder the solution writes, the run marker is not in the cache key;
* the audit's reading, on outputs an attacker would aim for (a name holding a newline and a fake
  "does not depend on any axioms" line, an old run's marker, missing or extra lines).

The execution tests at the end run each trick *past* the scan (its refusals cleared) through
the real judge, to show the judgment's own guards hold; they skip here (no ``lake``) and run
wherever Lean is installed.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from assay.proofs._judges import judge, plan_for
from assay.proofs._lean import lean_assumptions, lean_plan
from assay.proofs._lean_audit import read_audit
from assay.proofs._lean_lex import LeanLexError, tokens
from assay.proofs._lean_scan import refusals as lean_refusals
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import Limits, Sandbox

NO_LAKE = "lake is not on PATH: Lean cannot be installed on this machine"
TOOLCHAIN = Toolchain("lean", "/opt/lean/bin/lean", "4.9.0", "core@0", search_path=("/opt/lib",))
STANDARD = {"propext", "Classical.choice", "Quot.sound"}

# --- The tricks of the issue, each in several spellings ------------------------------------

SKIP_KERNEL = {
    "run_cmd": (
        "import Lean\nopen Lean Elab Command in\nrun_cmd do\n"
        '  let o := Name.mkSimple ("debug." ++ "skipKernelTC")\n'
        "  modifyScope fun s => { s with opts := s.opts.setBool o true }\n"
        "theorem fakeFalse : False := sorry\n"
    ),
    "run_cmd_without_import": (
        'run_cmd Lean.Elab.Command.elabCommand (← `(set_option $(Lean.mkIdent ("debug" ++ '
        '".skipKernelTC")) true))\n'
    ),
    "run_elab": "run_elab do\n  Lean.addDecl (.axiomDecl { name := `fakeFalse, levelParams := [], type := mkConst ``False, isUnsafe := false })\n",
    "run_meta": "run_meta pure ()\ntheorem t : 1 = 1 := rfl\n",
    "eval": '#eval show IO Unit from IO.println "x"\n',
    "initialize": "initialize pure ()\n",
    "elab_command": 'elab "cheat" : command => pure ()\n',
    "by_elab": "theorem t : False := by_elab pure (Lean.mkConst ``False)\n",
    "interpolated_run_tac": 'def s := s!"{(by run_tac pure () : True)}"\n',
    "option_from_strings_in_set_option": "set_option debug.skipKernelTC true in\ntheorem t : False := by decide\n",
    "async_off": "set_option Elab.async false\n",
}

COMMAND_ELAB = {
    "attribute": "@[command_elab Lean.Parser.Command.printAxioms] def f : Lean.Elab.Command.CommandElab := fun _ => pure ()\n",
    "second_attribute": "@[simp, command_elab printAxioms] def f := 1\n",
    "attribute_command": "attribute [command_elab printAxioms] f\n",
    "scoped": "@[scoped term_elab foo] def f := 1\n",
    "tactic": "@[tactic Lean.Parser.Tactic.decide] def f := 1\n",
    "init": "@[init] def f : IO Unit := pure ()\n",
    "csimp": "@[csimp] theorem f : @Nat.add = @Nat.mul := sorry\n",
    "underscore_word": "@[my_elab] def f := 1\n",
}

NEWLINE_NAMES = {
    "axiom": "axiom «x\n'assay_goal' does not depend on any axioms» : False\n",
    "theorem": "theorem «t\nassay_goal» : True := trivial\n",
    "dotted_part": "theorem «Classical.choice» : True := trivial\n",
    "escaped_refused_word": "theorem t : False := Lean.«ofReduceBool» _ _ rfl\n",
    "add_decl": (
        "run_cmd Lean.addDecl (.axiomDecl { name := .mkSimple \"x\\n'assay_goal' does not "
        'depend on any axioms", levelParams := [], type := .const ``False [], isUnsafe := false })\n'
    ),
}

REREAD_STATEMENT = {
    "instance": "instance (priority := high) : HAdd Nat Nat Nat := ⟨Nat.mul⟩\ntheorem t : 2 + 3 = 6 := rfl\n",
    "local_instance": "local instance : HAdd Nat Nat Nat := ⟨Nat.mul⟩\n",
    "instance_attribute": "@[instance] def i : HAdd Nat Nat Nat := ⟨Nat.mul⟩\n",
    "attribute_instance": "def i : HAdd Nat Nat Nat := ⟨Nat.mul⟩\nattribute [instance] i\n",
    "infixl": 'infixl:65 " + " => Nat.mul\n',
    "notation": 'notation a " + " b => Nat.mul a b\n',
    "macro_rules": "macro_rules | `($a + $b) => `($a * $b)\n",
    "deriving": "deriving instance Repr for Nat\n",
    "coercion_instance": "instance : Coe Bool Nat := ⟨fun _ => 0⟩\n",
}

IMPORTS = {
    "lean": "import Lean\ntheorem t : True := trivial\n",
    "lean_part": "import Lean.Elab.Command\n",
    "lake": "import Lake\n",
    "outside_header": "import Mathlib.Tactic\n",
    "prelude": "prelude\ntheorem t : True := True.intro\n",
    "late_import": "theorem t : True := trivial\nimport Lean\n",
    "module_system": "module\npublic import Init\n",
    "namespace": "open Lean in\ntheorem t : True := trivial\n",
}

HIDDEN_BY_LEXING = {
    "escaped_quote": 'def s := "a\\"b"\nrun_cmd pure ()\n',
    "char_quote": "def c := '\"'\nrun_cmd pure ()\n",
    "char_escaped_quote": "def c := '\\''\nrun_cmd pure ()\n",
    "closed_nested_comment": "/- /- -/ -/ run_cmd pure ()\n",
    "raw_string": 'def s := r#"a"b"#\nrun_cmd pure ()\n',
    "string_with_comment_opener": 'def s := "/-"\nrun_cmd pure ()\n',
    "interpolation_with_string": 'def s := s!"{"}" ++ "x"} run"\nrun_cmd pure ()\n',
    "line_comment_inside_string": 'def s := "--"\nrun_cmd pure ()\n',
    "number_glued": "theorem t : False := 2sorry\n",
}

TRICKS = {
    **{f"skip_kernel/{k}": v for k, v in SKIP_KERNEL.items()},
    **{f"command_elab/{k}": v for k, v in COMMAND_ELAB.items()},
    **{f"newline_name/{k}": v for k, v in NEWLINE_NAMES.items()},
    **{f"reread_statement/{k}": v for k, v in REREAD_STATEMENT.items()},
    **{f"import/{k}": v for k, v in IMPORTS.items()},
    **{f"lexing/{k}": v for k, v in HIDDEN_BY_LEXING.items()},
}


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_every_trick_is_refused_by_the_scan(name: str) -> None:
    assert lean_refusals(TRICKS[name]) != []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("/- /- -/ run_cmd -/ theorem t : True := trivial", []),
        ("-- run_cmd\ntheorem t : True := trivial", []),
        ('def s := "run_cmd sorry axiom"', []),
        ('def s := r#"run_cmd "sorry""#', []),
        ("def c := '\"'", []),
        ('def s := s!"{1 + 1} is two"', []),
        ("theorem t' (h' : True) : True := h'", []),
        ("theorem t : 2 + 2 = 4 := by decide", []),
        ("theorem t : True := by simp", []),
        ("@[simp] theorem t : True := trivial", []),
        ("@[simp, local simp] theorem t : True := trivial\nattribute [-simp] t", []),
        ("set_option maxHeartbeats 400000 in\ntheorem t : True := trivial", []),
        ("set_option linter.unusedVariables false", []),
        ("def a : Array Nat := #[1, 2]", []),
        ("theorem command_elab_free : True := trivial", []),
        ("theorem t (n : ℕ) (hₙ : n = n) : n = n := hₙ", []),
        ("theorem t : ∀ n : Nat, n + 0 = n := fun n => rfl", []),
        ("import Mathlib\ntheorem t : True := trivial", []),
        ("example (f : α → β) (s : Set α) : f '' s = f '' s := rfl", []),
        ("example (f : α → β) (s : Set β) : f ⁻¹' s = f ⁻¹' s := rfl", []),
        ("example : (fun x ↦ x) 1 = 1 := rfl", []),
    ],
)
def test_legitimate_proofs_pass_the_scan(source: str, expected: list[str]) -> None:
    assert lean_refusals(source, ["Mathlib"]) == expected


@pytest.mark.parametrize(
    "source",
    [
        "/- never closed\ntheorem t : True := trivial",
        'def s := "never closed',
        'def s := "{x}"  -- a brace in a plain string may be interpolation',
        "def c := 'ab'",
        'def x := (a)\' "run_cmd"',
        "theorem «never closed : True := trivial",
        's!"{never closed"',
    ],
)
def test_what_cannot_be_read_with_certainty_is_refused(source: str) -> None:
    with pytest.raises(LeanLexError):
        tokens(source)
    assert lean_refusals(source)[0].startswith("source that cannot be read with certainty")


def test_identifier_parts_are_compared_whole_and_unescaped() -> None:
    assert [t.parts for t in tokens("Lean.«ofReduceBool» command_elab «a.b».c")] == [
        ("Lean", "ofReduceBool"),
        ("command_elab",),
        ("a.b", "c"),
    ]
    assert [t.text for t in tokens("λx => x")][:2] == ["λ", "x"]  # λ is not a letter in Lean


# --- The plan: the statement's meaning cannot be changed by the solution --------------------


def test_the_statement_module_never_sees_the_solution() -> None:
    plan = lean_plan(
        TOOLCHAIN,
        REREAD_STATEMENT["instance"],
        statement="2 + 3 = 6",
        name="t",
        header="",
    )
    statement = plan.files["AssayStatement.lean"].decode()
    assert "AssaySolution" not in statement and "instance" not in statement
    assert "2 + 3 = 6" in statement
    solution_step, statement_step = plan.steps[0], plan.steps[1]
    assert "/proof" not in " ".join(solution_step)  # the solution imports nothing of ours
    assert "/proof" not in statement_step[2]  # nor does the statement import the solution
    assert "/proof" in plan.steps[2][2]  # only the wrapper reads both
    assert plan.refusals  # and the scan refuses the instance besides


def test_the_wrapper_has_no_header_so_an_open_cannot_pick_another_theorem() -> None:
    plan = lean_plan(
        TOOLCHAIN, "theorem t : True := trivial", statement="True", name="t", header="open Nat"
    )
    wrapper = plan.files["AssayGoal.lean"].decode()
    assert "open" not in wrapper
    assert wrapper.endswith(":= @_root_.t\n")


def test_no_lake_runs_where_the_solution_writes() -> None:
    plan = lean_plan(
        TOOLCHAIN, "theorem t : True := trivial", statement="True", name="t", header=""
    )
    assert not any("lake" in arg for step in plan.steps for arg in step)


def test_the_marker_is_fresh_per_run_and_not_in_the_steps() -> None:
    one, two = (
        lean_plan(TOOLCHAIN, "theorem t : True := trivial", statement="True", name="t", header="")
        for _ in range(2)
    )
    assert one.steps == two.steps and one.files == two.files  # so the cache key is stable
    assert one.marker != two.marker
    assert "{marker}" in one.steps[-1][2] and one.marker not in one.steps[-1][2]
    assert one.marker in one.commands()[-1][2] and "{marker}" not in one.commands()[-1][2]


# --- The audit's reading: every line accounted for -----------------------------------------


def _plan() -> Plan:
    return lean_plan(
        TOOLCHAIN, "theorem t : True := trivial", statement="True", name="t", header=""
    )


def _lines(plan: Plan, axioms: list[object], *, solution_imports: object = None) -> list[str]:
    m = plan.marker
    return [
        f"{m} begin {{}}",
        f"{m} module " + json.dumps([["AssaySolution"], solution_imports or [["Init"]]]),
        f"{m} module " + json.dumps([["AssayStatement"], [["Init"]]]),
        f"{m} module "
        + json.dumps([["AssayGoal"], [["Init"], ["AssayStatement"], ["AssaySolution"]]]),
        f"{m} replayed 2",
        *(f"{m} axiom {json.dumps(a)}" for a in axioms),
        f"{m} end {len(axioms)}",
    ]


def _green(plan: Plan, output: str) -> bool:
    read = lean_assumptions(output, plan)
    return read is not None and all(axiom in STANDARD for axiom in read)


def test_a_clean_audit_is_green() -> None:
    plan = _plan()
    assert _green(plan, "\n".join(_lines(plan, [["propext"]])) + "\n")


FAKE = "'assay_goal' does not depend on any axioms"


def _tampered(plan: Plan, case: str) -> str:
    m, good = plan.marker, _lines(plan, [["propext"]])
    cases = {
        # an axiom whose name holds a newline and a fake all-clear: one escaped line, not two
        "newline_name": _lines(plan, [[f"x\n{FAKE}"]]),
        "newline_name_raw": [*good[:5], f'{m} axiom ["x', f'{FAKE}"]', f"{m} end 1"],
        "fake_line_after_begin": [*good[:-1], FAKE, good[-1]],
        "fake_old_format_only": [FAKE],
        "no_marker": [line.split(" ", 1)[1] for line in good],
        "old_runs_marker": [line.replace(m, "assay-lean-audit-" + "0" * 32) for line in good],
        "missing_end": good[:-1],
        "end_count_lies": [*good[:-1], f"{m} end 0"],
        "line_after_end": [*good, f'{m} axiom ["extra"]'],
        "duplicate_axiom": [*good[:-1], good[-2], f"{m} end 2"],
        "missing_module": [good[0], *good[2:]],
        "statement_imports_more": [
            good[0],
            good[1],
            f"{m} module " + json.dumps([["AssayStatement"], [["Init"], ["Lean"]]]),
            *good[3:],
        ],
        "no_replay": [line for line in good if " replayed " not in line],
        "rejected": [*good[:-1], f'{m} rejected "the kernel said no"', good[-1]],
        "trailing_garbage": [*good[:-1], f"{m} end 1 0"],
        "dotted_part": _lines(plan, [["Classical.choice"]]),
        "empty_part": _lines(plan, [["", "propext"]]),
        "begin_missing": good[1:],
        "stray_line_inside": [*good[:3], "info: hello", *good[3:]],
        "solution_imports_lean": _lines(plan, [], solution_imports=[["Init"], ["Lean"]]),
        "solution_imports_outside_header": _lines(
            plan, [], solution_imports=[["Init"], ["Mathlib"]]
        ),
    }
    return "\n".join(cases[case]) + "\n"


@pytest.mark.parametrize(
    "case",
    [
        "newline_name",
        "newline_name_raw",
        "fake_line_after_begin",
        "fake_old_format_only",
        "no_marker",
        "old_runs_marker",
        "missing_end",
        "end_count_lies",
        "line_after_end",
        "duplicate_axiom",
        "missing_module",
        "statement_imports_more",
        "no_replay",
        "rejected",
        "trailing_garbage",
        "dotted_part",
        "empty_part",
        "begin_missing",
        "stray_line_inside",
        "solution_imports_lean",
        "solution_imports_outside_header",
    ],
)
def test_a_tampered_or_incomplete_audit_is_never_green(case: str) -> None:
    plan = _plan()
    assert not _green(plan, _tampered(plan, case))


def test_a_name_with_a_newline_is_one_axiom_shown_escaped() -> None:
    plan = _plan()
    assert plan.expects is not None
    read = read_audit(_tampered(plan, "newline_name"), plan.expects)
    assert read is not None and len(read.axioms) == 1
    assert "\\n" in read.axioms[0] and "\n" not in read.axioms[0]


# --- Execution: each trick past the scan, through the real judge (where Lean is installed) ---

PAST_THE_SCAN = {
    "reread_statement": ("2 + 3 = 6", REREAD_STATEMENT["instance"]),
    "skip_kernel": (
        "False",
        "import Lean\nopen Lean Elab Command in\nset_option debug.skipKernelTC true in\n"
        "run_cmd liftCoreM <| addDecl <| .thmDecl\n"
        "  { name := `t, levelParams := [], type := .const ``False [],\n"
        "    value := .const ``True.intro [] }\n",
    ),
    "newline_axiom": (
        "False",
        "import Lean\nopen Lean Elab Command in\nrun_cmd liftCoreM <| addDecl <| .axiomDecl\n"
        "  { name := .mkSimple \"x\\n'assay_goal' does not depend on any axioms\",\n"
        "    levelParams := [], type := .const ``False [], isUnsafe := false }\n"
        "theorem t : False := «x\n'assay_goal' does not depend on any axioms»\n",
    ),
    "print_axioms_replaced": (
        "False",
        "import Lean\nopen Lean Elab Command\n"
        "@[command_elab Lean.Parser.Command.printAxioms] def quiet : CommandElab := fun _ => pure ()\n"
        "axiom cheat : False\ntheorem t : False := cheat\n",
    ),
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("lake") is None, reason=NO_LAKE)
@pytest.mark.parametrize("case", sorted(PAST_THE_SCAN))
def test_the_judgment_holds_even_past_the_scan(case: str, tmp_path: Path) -> None:
    statement, source = PAST_THE_SCAN[case]
    header = "import Lean" if "import Lean" in source else ""
    plan = plan_for("lean", source, statement=statement, name="t", header=header)
    assert plan.refusals  # the scan alone refuses it; now clear that and judge it anyway
    bare = dataclasses.replace(plan, refusals=[])
    judgment = judge("lean", bare, Sandbox(backend="bwrap"), Limits(timeout=600, memory_mb=8192))
    assert judgment.verdict is not None
    assert not judgment.verdict.green


# --- The plumbing, for real, with a stand-in for the one part that cannot be installed ---------
# Everything around Lean runs for real: the plan, the sandbox (bwrap, the toolchain folder
# mounted read-only from outside /usr), sh, sha256sum, the marker put into the audit command
# only when it runs, the exit codes and the reading. Only `lean` is a stand-in script, steered
# by a comment in the solution, that acts out what a solution's code or a broken audit could do.

STANDIN_LEAN = r"""#!/bin/sh
mode=$(sed -n 's/^-- STANDIN: //p' AssaySolution.lean | head -n 1)
if [ "$1" = "-o" ]; then
  if [ "$3" = AssaySolution.lean ]; then
    [ "$mode" = tamper ] && echo "def _root_.AssayStatement.statement : Prop := True" > AssayStatement.lean
    [ "$mode" = tamper_audit ] && echo "def main : IO UInt32 := pure 0" > AssayAudit.lean
    [ "$mode" = plant ] && echo forged > Planted.olean
    [ "$mode" = wrong ] && { echo "AssaySolution.lean:1:0: error: type mismatch"; exit 1; }
    [ "$mode" = no_olean ] && exit 0
    [ "$mode" = olean_link ] && { ln -s AssaySolution.lean "$2"; exit 0; }
    [ "$mode" = olean_fifo ] && { mkfifo "$2"; exit 0; }
  fi
  cp "$3" "$2"
  [ "$3" = AssayGoal.lean ] && [ "$mode" = tamper_in_wrapper ] && echo forged > AssayStatement.olean
  exit 0
fi
[ "$(cat AssayStatement.olean)" = "$(cat AssayStatement.lean)" ] || mode=axiom
[ -e Planted.olean ] && mode=axiom
[ -f AssaySolution.olean ] && [ ! -L AssaySolution.olean ] || mode=axiom
m=$3
[ "$mode" = kernel ] && { echo "$m begin {}"; echo "$m rejected \"(kernel) declaration type mismatch\""; exit 10; }
[ "$mode" = forge ] && { echo "'assay_goal' does not depend on any axioms"; exit 0; }
[ "$mode" = old_marker ] && m=assay-lean-audit-00000000000000000000000000000000
echo "$m begin {}"
echo "$m module [[\"AssaySolution\"],[[\"Init\"]]]"
echo "$m module [[\"AssayStatement\"],[[\"Init\"]]]"
echo "$m module [[\"AssayGoal\"],[[\"Init\"],[\"AssayStatement\"],[\"AssaySolution\"]]]"
echo "$m replayed 3"
if [ "$mode" = axiom ]; then echo "$m axiom [\"cheat\"]"; else echo "$m axiom [\"propext\"]"; fi
echo "$m end 1"
"""


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Toolchain:
    root = tmp_path / "toolchain"
    (root / "bin").mkdir(parents=True)
    lean = root / "bin" / "lean"
    lean.write_text(STANDIN_LEAN)
    for path in (tmp_path, root, root / "bin"):
        path.chmod(0o755)
    lean.chmod(0o755)
    found = Toolchain(
        "lean", str(lean), "stand-in", "standin@0", search_path=(str(root),), mounts=(str(root),)
    )
    monkeypatch.setattr("assay.proofs._lean.lean", lambda project: found)
    return found


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
@pytest.mark.parametrize(
    ("mode", "finding", "green"),
    [
        ("clean", "checks", True),
        # code run while the wrapper imports the solution rewrites the compiled statement: the
        # audit step rebuilds it from the checked source, so the forgery never reaches the audit
        ("tamper_in_wrapper", "checks", True),
        ("axiom", "checks", False),
        ("wrong", "does_not_check", False),
        ("kernel", "does_not_check", False),
        # code run while the solution compiles (step 1) works in a folder of its own: what it
        # writes there (a trusted source rewritten, a module planted for a later step to find)
        # never reaches the later steps, and only a regular AssaySolution.olean is copied out
        ("tamper", "checks", True),
        ("tamper_audit", "checks", True),
        ("plant", "checks", True),
        ("no_olean", "does_not_check", False),
        ("olean_link", "does_not_check", False),
        ("olean_fifo", "does_not_check", False),
        ("forge", "checks", False),
        ("old_marker", "checks", False),
    ],
)
def test_the_steps_around_lean_run_for_real(
    mode: str, finding: str, green: bool, standin: Toolchain
) -> None:
    source = f"-- STANDIN: {mode}\ntheorem t : True := trivial\n"
    plan = lean_plan(standin, source, statement="True", name="t", header="")
    assert plan.refusals == []
    judged = judge("lean", plan, Sandbox(backend="bwrap"), Limits(timeout=60))
    verdict = judged.verdict
    assert verdict is not None
    assert (verdict.finding, verdict.green) == (finding, green), verdict.diagnostics
    assert "{marker}" in verdict.steps[-1][2]  # the recorded command, as keyed
