"""Holes in Lean's judgment found by the adversarial review "adv-lean" (by reading Lean's sources:
no Lean toolchain can run here), each now closed; the tests state the behaviour the fix gives
(they were ``xfail(strict=True)`` until it landed). The design assumed no code of the solution
runs in step 1; every class below broke that assumption or the audit's defence against a forged
``.olean``. Now the solution compiles in a folder of its own (only its ``.olean`` is copied out,
tested with a stand-in ``lean`` in ``test_lean_audit_and_scan.py``), and:

1. **The lexer and Lean disagreed on token boundaries**, so whole commands (``#eval``,
   ``run_cmd``, ``initialize``, ``instance``, ``set_option debug.skipKernelTC``) were hidden from
   the scan:
   a. every string after an identifier ending in ``!`` was read as interpolated, but ``panic!``
      (and any user ``foo!``) takes a plain string: now only ``s!`` interpolates, and a ``{``
      in any other string (``f!``/``m!`` included: tokens only where their module is imported)
      is refused;
   b. ``×'`` (core PProd notation), ``∑'``, ``⁻¹'`` are single tokens to Lean, so in ``×'"'`` the
      ``"`` opens a string, while the lexer read the character literal ``'"'``: an apostrophe
      glued to a non-ASCII symbol that could also open a character literal is now refused;
   c. ``0x0run_cmd``, ``0b1instance``, ``1e1axiom`` are a number and a word to Lean
      (``numberFnAux``): numbers are now read like ``numberFnAux`` and one glued to an
      identifier character is refused.
2. **Native evaluation under another spelling**: ``decide +native``: ``native`` is a refused
   word.
3. **Library tactics that run a declaration of the solution**: Aesop's ``tactic`` rule builder
   (``aesop (add safe tactic evil)``, ``add_aesop_rules``): refused as a pre-filter; the class is
   closed by the separate folder of step 1.
4. **The audit imported names read from untrusted ``.olean`` files before checking them**: it now
   receives the header's modules on its command line, refuses any other import (or a name part
   that is not plain) before importing, and imports only those and ``Init``.
5. **The goal's type was compared without universe levels** (``isConstOf``): now the exact
   constant at the goal's own level parameters, as many as the statement has.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.proofs._lean import lean_plan
from assay.proofs._lean_audit import AUDIT_SOURCE
from assay.proofs._lean_scan import refusals as lean_refusals
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain

HIDDEN_BY_A_BANG_STRING = {
    "eval_after_panic": 'def x : String := panic! "{"\n#eval IO.println 1\ndef y : String := "}"\n',
    "run_cmd_after_panic": (
        'def x : String := panic! "{"\nrun_cmd pure ()\ndef y : String := "}"\n'
    ),
    "skip_kernel_after_panic": (
        'def x : String := panic! "{"\nset_option debug.skipKernelTC true in\n'
        'theorem bad : 2 + 3 = 6 := sorry\ndef y : String := "}"\n'
    ),
    "instance_after_own_bang_function": (
        "def note! (s : String) : String := s\n"
        'def x : String := note! "{"\n'
        "instance (priority := high) : HAdd Nat Nat Nat := ⟨Nat.mul⟩\n"
        'def y : String := "}"\n'
    ),
    "initialize_after_panic": (
        'def x : String := panic! "{"\ninitialize pure ()\ndef y : String := "}"\n'
    ),
    "native_decide_same_line": (
        'theorem t : 2 + 3 = 5 := by have _h : String := panic! "{"; native_decide; '
        'have _g : String := "}"\n'
    ),
}


@pytest.mark.parametrize("source", HIDDEN_BY_A_BANG_STRING.values(), ids=HIDDEN_BY_A_BANG_STRING)
def test_a_plain_string_after_a_bang_identifier_hides_nothing(source: str) -> None:
    assert lean_refusals(source)


GLUED_APOSTROPHE = {
    # Lean reads `×'` (core PProd notation), `∑'`, `⁻¹'` (Mathlib) as one token, so the `"`
    # after it opens a string; the lexer reads `'"'` as a character literal instead, and from
    # there on each string of one is code to the other: the middle segment is hidden.
    "pprod_token": (
        "def h := Nat ×'\"'\ndef dummy := 1 \"\n#eval IO.Process.exit 0\ndef k := \"\n'\"'x'\n"
    ),
    "tsum_token": ("def h := ∑'\"'\ndef dummy := 1 \"\nrun_cmd pure ()\ndef k := \"\n'\"'x'\n"),
    "preimage_token": (
        "def h := f ⁻¹'\"'\ndef dummy := 1 \"\n"
        "instance : HAdd Nat Nat Nat := ⟨Nat.mul⟩\ndef k := \"\n'\"'x'\n"
    ),
}


@pytest.mark.parametrize("source", GLUED_APOSTROPHE.values(), ids=GLUED_APOSTROPHE)
def test_an_apostrophe_ending_a_symbol_token_hides_nothing(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"])


NUMBER_THEN_WORD = {
    # Lean's numberFnAux reads `0x`/`0b`/`0o` numbers and a decimal's `e` exponent; the word
    # glued after them is a separate token to Lean, but the lexer reads a number of digits
    # only and then one identifier (`x0run_cmd`), whose part is no refused word.
    "hex_then_run_cmd": "def x := 0x0run_cmd IO.println 1\n",
    "exponent_then_axiom": "def x := 1e1axiom bad : False\ntheorem t : 2 + 3 = 6 := bad.elim\n",
    "binary_then_instance": "def x := 0b1instance : HAdd Nat Nat Nat := ⟨Nat.mul⟩\n",
    "decimal_exponent_then_initialize": "def x := 1.5e2initialize pure ()\n",
    "octal_then_opaque": "def x := 0o7opaque f : Nat\n",
}


@pytest.mark.parametrize("source", NUMBER_THEN_WORD.values(), ids=NUMBER_THEN_WORD)
def test_a_word_glued_to_a_number_literal_is_seen(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"])


NATIVE_EVALUATION = {
    "decide_plus_native": "theorem t : 2 + 3 = 5 := by decide +native",
    "decide_config_native": "theorem t : 2 + 3 = 5 := by decide (config := { native := true })",
    "decide_kernel_off_native": "theorem t : 2 + 3 = 5 := by decide -kernel +native",
    "runs_the_solution_code": (
        "def f (n : Nat) : Nat := n + 1\ntheorem t : f 1 = 2 := by decide +native"
    ),
}


@pytest.mark.parametrize("source", NATIVE_EVALUATION.values(), ids=NATIVE_EVALUATION)
def test_native_evaluation_under_any_spelling_is_refused(source: str) -> None:
    assert lean_refusals(source)


@pytest.mark.parametrize("module", ["Foo", "Foo.Bar"])
def test_the_audit_knows_the_allowed_imports_before_it_imports(tmp_path: Path, module: str) -> None:
    library = tmp_path / "lib"
    olean = library.joinpath(*module.split(".")).with_suffix(".olean")
    olean.parent.mkdir(parents=True)
    olean.write_bytes(b"")
    toolchain = Toolchain(
        "lean", "/opt/lean/bin/lean", "4.9.0", "core@0", search_path=(str(library),)
    )
    plan = lean_plan(
        toolchain,
        "theorem t : True := trivial",
        statement="True",
        name="t",
        header=f"import {module}",
    )
    audit_command = plan.commands()[-1][-1]
    run = audit_command[audit_command.index("--run") :]
    audit_source = plan.files["AssayAudit.lean"].decode()
    # the allowed modules reach the audit (as arguments, or written into its source), so it
    # can refuse any other import name before calling importModules
    assert module in run or f"`{module}" in audit_source


LIBRARY_RUNS_THE_SOLUTION = {
    "aesop_tactic_rule": (
        "def evil : Aesop.RuleTac := fun _ => do\n"
        '  IO.FS.writeFile "AssaySolution.olean" ""\n'
        "  IO.Process.exit 0\n"
        "theorem t : 2 + 3 = 5 := by aesop (add safe tactic evil)\n"
    ),
    "aesop_norm_tactic_rule": (
        "def evil : Aesop.SingleRuleTac := fun _ => do\n"
        "  IO.Process.exit 0\n"
        "theorem t : 2 + 3 = 5 := by aesop (add norm tactic evil)\n"
    ),
    "aesop_rules_command": (
        "def evil : Aesop.RuleTac := fun _ => IO.Process.exit 0\n"
        "add_aesop_rules safe tactic evil\n"
        "theorem t : 2 + 3 = 5 := by aesop\n"
    ),
}


@pytest.mark.parametrize(
    "source", LIBRARY_RUNS_THE_SOLUTION.values(), ids=LIBRARY_RUNS_THE_SOLUTION
)
def test_library_tactics_that_run_a_solution_declaration_are_refused(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"])


LEGITIMATE_AROUND_THE_FIXES = {
    "interpolation_after_s_bang": 'def s (n : Nat) : String := s!"n = {n + 1} and {"x"}"\n',
    "panic_plain_string": 'def x : Nat := if 1 = 1 then 0 else panic! "impossible"\n',
    "own_bang_function_plain_string": 'def note! (s : String) : String := s\ndef y := note! "a"\n',
    "numbers": "def x : Float := 0x1F.toFloat + 1e5 + 2.5e-3 + 0.5 + 1_000 + 0b101 + 0o17\n",
    "projections": "theorem t (p : Nat × Nat × Nat) : p.2.1 = p.2.1 := rfl\n",
    "pprod_spaced": "def h : PProd Nat Nat := ⟨1, 2⟩\ndef k : Nat ×' Nat := h\n",
    "tsum_binder": "theorem t : (∑' i : ℕ, (0 : ℝ)) = 0 := by simp\n",
    "preimage": "theorem t (f : ℕ → ℕ) (s : Set ℕ) : f ⁻¹' s = f ⁻¹' s := rfl\n",
    "chars": "def c : List Char := ['a', '\\'', '\"']\n",
    "decide": "theorem t : 2 + 3 = 5 := by decide\n",
    "aesop_plain": "theorem t (p : Prop) (h : p) : p := by aesop\n",
    "aesop_config": "theorem t (p : Prop) (h : p) : p := by aesop (config := { maxRuleApplications := 10 })\n",
}


@pytest.mark.parametrize(
    "source", LEGITIMATE_AROUND_THE_FIXES.values(), ids=LEGITIMATE_AROUND_THE_FIXES
)
def test_legitimate_code_near_each_fix_still_passes(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"]) == []


@pytest.mark.parametrize(
    "source",
    [
        # `m!`/`f!` are tokens only where their module is imported; elsewhere plain strings
        'def m! (s : String) : String := s\ndef x := m! "{"\n#eval 1\ndef y := "}"\n',
        'def f! (s : String) : String := s\ndef x := f! "{"\n#eval 1\ndef y := "}"\n',
        # a dotted name ending in `s!` is an identifier, not the `s!` token
        'def x := Foo.s! "{"\n#eval 1\ndef y := "}"\n',
    ],
    ids=["m_bang", "f_bang", "dotted_s_bang"],
)
def test_a_brace_after_anything_but_the_s_bang_token_is_refused(source: str) -> None:
    assert lean_refusals(source)


TOOLCHAIN = Toolchain("lean", "/opt/lean/bin/lean", "4.9.0", "core@0", search_path=())


def _plan(header: str = "") -> Plan:
    return lean_plan(
        TOOLCHAIN, "theorem t : True := trivial", statement="True", name="t", header=header
    )


def test_the_audit_checks_every_import_before_importing_and_imports_only_the_header() -> None:
    source = AUDIT_SOURCE
    check = source.index("plainName imp.module && (allowedFor header modName).contains")
    imported = source.index("importModules")
    assert check < imported
    # what is imported is decided by assay (the header's modules and Init), never read from
    # the compiled files
    assert "importModules ((header.push `Init).map" in source
    assert "imports := imports.push" not in source


def test_the_audit_compares_the_goal_with_the_statement_at_all_its_levels() -> None:
    source = AUDIT_SOURCE
    assert "isConstOf" not in source
    assert "goal.levelParams.length == stmt.levelParams.length && goal.type == stated" in source
    assert "Expr.const `AssayStatement.statement (goal.levelParams.map Level.param)" in source


def test_the_solution_compiles_alone_and_only_its_olean_is_copied_out() -> None:
    plan = _plan()
    assert plan.alone is not None
    assert plan.alone.sources == ("AssaySolution.lean",)
    assert plan.alone.output == "AssaySolution.olean"
    assert 0 < plan.alone.max_bytes <= 1 << 30
    first = plan.steps[0]
    assert "AssaySolution.lean" in first and "AssayStatement.lean" not in " ".join(first)


@pytest.mark.parametrize(
    "source",
    [
        "theorem t : 2 + 3 = 5 := by aesop_cat (add safe tactic evil)",
        "theorem t : 2 + 3 = 5 := by my_aesop_wrapper (add norm tactic evil)",
        "theorem t : 2 + 3 = 5 := by my_aesop_wrapper (add 50% tactic evil)",
        "theorem t : 2 + 3 = 5 := by aesop? (add apply foo)",
    ],
    ids=["aesop_cat", "wrapper_norm", "wrapper_percent", "aesop_query_any_rule"],
)
def test_aesop_rules_added_under_any_tactic_name_are_refused(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"])


def test_a_function_called_add_is_not_an_aesop_rule() -> None:
    assert lean_refusals("def add (a b : Nat) := a + b\ntheorem t : (add 1 2) = 3 := rfl\n") == []


def test_the_audit_step_checks_the_trusted_sources_again_after_compiling() -> None:
    script = _plan().steps[-1][-1]
    lines = script.splitlines()
    compile_at = next(i for i, line in enumerate(lines) if " -o AssayStatement.olean" in line)
    run_at = next(i for i, line in enumerate(lines) if " --run " in line)
    checks_between = [line for line in lines[compile_at:run_at] if "sha256sum -c" in line]
    assert len(checks_between) == 2
