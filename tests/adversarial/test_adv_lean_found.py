"""Holes in Lean's judgment found by the adversarial review "adv-lean" (by reading Lean's sources:
no Lean toolchain can run here). Each test states the behaviour a fix must give and is marked
``xfail(strict=True)`` until the fix lands (then the mark must go). The design assumes no code of
the solution runs in step 1; every class below breaks that assumption or the audit's defence
against a forged ``.olean``.

1. **The lexer and Lean disagree on token boundaries**, so whole commands (``#eval``,
   ``run_cmd``, ``initialize``, ``instance``, ``set_option debug.skipKernelTC``) are hidden from
   the scan:
   a. every string after an identifier ending in ``!`` is read as interpolated, but ``panic!``
      (and any user ``foo!``) takes a plain string: in ``panic! "{"`` the lexer reads the
      closing ``"`` as the start of a string that runs to the next ``"``;
   b. ``×'`` (core PProd notation), ``∑'``, ``⁻¹'`` are single tokens to Lean, so in ``×'"'`` the
      ``"`` opens a string, while the lexer reads the character literal ``'"'``: from there the
      two readings swap string and code at every ``"``;
   c. ``0x0run_cmd``, ``0b1instance``, ``1e1axiom`` are a number and a word to Lean
      (``numberFnAux``: hex/binary/octal digits, a decimal's exponent), one identifier to the
      lexer (``x0run_cmd``).
2. **Native evaluation under another spelling**: ``decide +native`` (Lean's
   ``DecideConfig.native``: "The `native_decide` tactic is a synonym for `decide +native`").
3. **Library tactics that run a declaration of the solution**: Aesop's ``tactic`` rule builder
   (``aesop (add safe tactic evil)``, ``add_aesop_rules``) ``evalConst``s ``evil``, so its IO
   runs in step 1 in any release.
4. **The audit imports names read from untrusted ``.olean`` files before checking them**, in a
   process where ``lean_main`` enabled initializer execution; ``SearchPath.findWithExt`` does not
   validate name parts, so ``«..».«..».….Evil`` reaches the work folder; the imported module's
   declarations are trusted without replay (and its ``[init]`` code runs in releases whose
   ``importModules`` always loads extensions). The audit must know the allowed imports (the
   header's, and Init) and refuse anything else *before* importing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.proofs._languages import lean_plan
from assay.proofs._scan import lean_refusals
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


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: a string after any `foo!` identifier is lexed as "
    'interpolated, so `panic! "{"` hides every command up to the next quote from the scan',
)
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


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: an apostrophe glued to a non-ASCII token (`×'`) is "
    "lexed as a character literal `'\"'`, so string boundaries flip and code is hidden",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: `0x0run_cmd` is the number `0x0` and `run_cmd` to "
    "Lean, but the lexer reads `0` and the identifier `x0run_cmd`",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: `decide +native` is `native_decide` spelled another "
    "way; the solution's code is compiled and run in step 1",
)
@pytest.mark.parametrize("source", NATIVE_EVALUATION.values(), ids=NATIVE_EVALUATION)
def test_native_evaluation_under_any_spelling_is_refused(source: str) -> None:
    assert lean_refusals(source)


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: the audit imports the module names a (possibly "
    "forged) .olean lists before checking them; it must know the allowed imports first",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="found by adversarial review: Aesop's `tactic` rule builder runs a declaration of "
    "the solution with evalConst, so the solution's IO runs in step 1 (any Lean release)",
)
@pytest.mark.parametrize(
    "source", LIBRARY_RUNS_THE_SOLUTION.values(), ids=LIBRARY_RUNS_THE_SOLUTION
)
def test_library_tactics_that_run_a_solution_declaration_are_refused(source: str) -> None:
    assert lean_refusals(source, ["Mathlib"])
