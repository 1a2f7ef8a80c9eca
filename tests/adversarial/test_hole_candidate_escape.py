"""A hole candidate is one term: it cannot close the parentheses it is put in, or comment them out.

Issue 7: ``refl) where x = (refl`` closed the parentheses assay wraps a candidate in and went on
as declarations of the obligation's file. A candidate is read with Agda's own lexer and must be
one closed group of brackets (``()``, ``{}``, ``{{}}``, ``⦃⦄``, ``⦇⦈``, idiom brackets), with no
comment, pragma, line break, top-level ``;`` or declaration keyword; brackets inside literals,
comments and holes do not count, exactly as Agda does not count them. Real Agda in bubblewrap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay import CheckContext, Config, Status, build_check
from assay.proofs import fill_hole
from assay.proofs._agda_scan import agda_candidate_refusals
from assay.sandbox import Sandbox
from tests.proofs.conftest import need

HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"

ESCAPES = {
    "close_then_where": "refl) where x = (refl",
    "close_then_declarations": "refl) ; postulate w : 1 + 1 ≡ 3 ; x = (refl",
    "close_brace": "refl } {",
    "close_instance_bracket": "refl ⦄ ⦃",
    "mismatched_brackets": "(refl }",
    "line_comment_eats_the_paren": "refl --",
    "block_comment_eats_the_paren": "refl {- ",
    "line_break_then_declaration": "refl\ncheat : 1 + 1 ≡ 3",
    "pragma": "{-# TERMINATING #-} refl",
    "harmless_options_pragma": "{-# OPTIONS --safe #-} refl",
    "open_import": "let open import Agda.Builtin.TrustMe in primTrustMe",
    "module_keyword": "let module M = X in refl",
    "where_not_after_lambda": "refl where",
    "with_abstraction": "refl with 1",
    "paren_hidden_in_a_char_does_not_close": "')' ) where x = ( refl",
    "quote_in_string_then_close": '"\\")" ) where x = ( refl',
    "top_level_semicolon": "refl ; refl",
    "unterminated_hole": "{! refl",
    "tab": "refl\t",
}


@pytest.mark.parametrize("case", sorted(ESCAPES))
def test_escaping_candidates_are_refused_unjudged(case: str, tmp_path: Path) -> None:
    need("agda")
    obligation = tmp_path / "Canary.agda"
    text = f"module Canary where\n\n{HEADER}\n\ncanary : 1 + 1 ≡ 3\ncanary = {{! !}}\n"
    obligation.write_text(text)
    assert agda_candidate_refusals(ESCAPES[case]), case
    result = fill_hole(obligation, 7, 10, ESCAPES[case], sandbox=Sandbox(), stdlib=False)
    assert result.status == "refused", (case, result.diagnostics)
    assert result.verdict is None  # nothing was run
    assert obligation.read_text() == text


ONE_TERM = {
    "lambda_with_clauses": "λ { refl → refl }",
    "let_binding": "λ p → let r = p in r",
    "char_holding_a_paren": "λ p → (λ (_ : Char) → p) ')'",
    "string_holding_brackets": 'λ p → (λ (_ : String) → p) ")} -- {-"',
    "lambda_where": "λ where refl → refl",
    "nested_parentheses": "((λ x → x) ((λ p → p)))",
    "instance_brackets": "λ p → (λ ⦃ _ : Nat ⦄ → p) ⦃ 0 ⦄",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(ONE_TERM))
def test_one_term_candidates_are_judged(case: str, tmp_path: Path) -> None:
    """What is refused is the escape, not the term forms a proof needs."""
    need("agda")
    obligation = tmp_path / "Id.agda"
    header = f"{HEADER}\nopen import Agda.Builtin.Char\nopen import Agda.Builtin.String"
    obligation.write_text(
        f"module Id where\n\n{header}\n\nid≡ : {{x : Nat}} → x ≡ x → x ≡ x\nid≡ = {{! !}}\n"
    )
    assert agda_candidate_refusals(ONE_TERM[case]) == [], case
    result = fill_hole(obligation, 9, 7, ONE_TERM[case], sandbox=Sandbox(), stdlib=False)
    assert result.status == "solved", (case, result.diagnostics)


def _kind(tmp_path: Path, answer: str) -> Any:
    (tmp_path / "Hole.agda").write_text(
        f"module Hole where\n\n{HEADER}\n\nwrong : 1 + 1 ≡ 3\nwrong = {{! !}}\n"
    )
    ctx = CheckContext(
        answer=answer,
        workspace=tmp_path,
        base_dir=tmp_path,
        sandbox=Sandbox(backend="bwrap"),
        config=Config(judgment_cache="off"),
    )
    spec = {"kind": "agda", "obligation": "Hole.agda", "stdlib": False}
    return build_check(spec).run(ctx)


@pytest.mark.parametrize("case", ["close_then_where", "close_then_declarations", "close_brace"])
def test_the_kind_refutes_an_escape_with_the_reason(case: str, tmp_path: Path) -> None:
    need("agda")
    outcome = _kind(tmp_path, ESCAPES[case])
    assert outcome.status is Status.REFUTED
    assert "refused before judging" in outcome.detail and "one term" in outcome.detail
