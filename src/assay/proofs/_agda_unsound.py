"""What a whole-file Agda solution may not declare: the ingredients of known proofs of ``⊥``.

Both Agdas assay runs (2.6.2.2 and 2.6.4.3) accept proofs of ``⊥`` under ``--safe`` through two
reported bugs, and adversarial rounds got ``1 + 1 ≡ 3`` verified through each:

- agda/agda#8564: a data or record type in one mutual group with a point-free definition whose
  arity its type computes (``P = Negate``) hides a negative occurrence from the positivity
  checker;
- agda/agda#8696: a module application inside a ``where`` or ``let`` block, a record's body or a
  mutual group copies a data type with its arguments marked unused, so a function's argument is
  judged nonvariant and ``f b ⊤ ≡ f b ⊥`` holds by ``refl``.

Reading Agda's mutual grouping from its tokens was tried first and an adversarial round found a
dozen spellings it missed (signatures split over lines, ``private`` blocks Agda looks through,
``;`` on one line). So the rule refuses the ingredients themselves, wherever they stand: a
solution declares no data or record type (``data``, ``codata``, a ``record`` declaration) and
applies no module to arguments (``module N = M a``, ``open M a``, ``open import M a``,
``let open M a``); ``open M`` without arguments (``open ≡-Reasoning``) stays. The cost is a
false reject of solutions that define their own types or open a module applied to arguments
(use qualified names, or library types): the statement and its ``header`` are the author's and
may declare what they need. Hole obligations are the author's files too, and a hole candidate
can declare nothing, so the rule is for whole-file solutions only.
"""

from __future__ import annotations

from assay.proofs._agda_lex import Token, code_only

_MODULE_ENDS = frozenset({"using", "hiding", "renaming", "public", ";", "in"})
"""What may follow a module's name in an ``open`` without applying it to arguments."""


def solution_refusals(found: list[Token], text: str) -> list[str]:
    """The refused declarations among ``found`` (the tokens of ``text``, a whole-file solution)."""
    code = [t for t in code_only(found) if t.kind != "pragma"]
    shapes: list[str] = []
    for index, token in enumerate(code):
        if token.kind != "word":
            continue
        if token.text in ("data", "codata") or (
            token.text == "record" and _declares_a_record(code, index)
        ):
            shapes.append(
                f"a `{token.text}` declaration (a solution declares no data or record type: "
                "agda/agda#8564)"
            )
        elif token.text == "module" and _applies(code, index):
            shapes.append(
                "a module application `module … = …` (agda/agda#8696: a solution applies no "
                "module to arguments)"
            )
        elif token.text == "open" and _opens_applied(code, index, text):
            shapes.append(
                "`open` of a module applied to arguments (agda/agda#8696: a solution applies no "
                "module to arguments; use qualified names)"
            )
    return list(dict.fromkeys(shapes))


def _declares_a_record(code: list[Token], index: int) -> bool:
    """``record`` at ``code[index]`` declares a type, unless it is a record expression
    (``record {``) or an update (``record e { f = v }``, ``record e {}``)."""
    after = code[index + 1 : index + 3]
    if after and after[0].text == "{":
        return False
    if len(after) == 2 and after[0].kind == "word" and after[1].text == "{":
        inside = _brace_group(code, index + 2)
        return not (not inside or any(t.text == "=" for t in inside))
    return True


def _brace_group(code: list[Token], at: int) -> list[Token]:
    """The tokens inside the bracket group that opens at ``code[at]``."""
    inside: list[Token] = []
    depth = 0
    for token in code[at:]:
        if token.kind == "symbol" and token.text in ("(", "{", "⦃", "["):
            depth += 1
            if depth == 1:
                continue
        elif token.kind == "symbol" and token.text in ("{{",):
            depth += 2
            if depth == 2:
                continue
        elif token.kind == "symbol" and token.text in (")", "}", "⦄", "]"):
            depth -= 1
            if depth <= 0:
                return inside
        inside.append(token)
    return inside


def _applies(code: list[Token], index: int) -> bool:
    """``module`` at ``code[index]`` is an application (``module N … = M …``): an ``=`` before
    any ``where``. Read generously: a module declaration is refused unless a ``where`` comes
    first."""
    for token in code[index + 1 :]:
        if token.text == "where":
            return False
        if token.text == "=":
            return True
    return True


def _opens_applied(code: list[Token], index: int, text: str) -> bool:
    """``open`` at ``code[index]`` opens a module applied to arguments: after the module's
    name (``open import`` skipped), the next token on the same line, or on a later line indented
    past ``open`` itself (a continuation), is not one that ends an unapplied ``open``."""
    at = index + 1
    if at < len(code) and code[at].text == "import":
        at += 1
    if at >= len(code):
        return False
    name = code[at]
    if at + 1 >= len(code):
        return False
    following = code[at + 1]
    if following.text in _MODULE_ENDS:
        return False
    if "\n" not in text[name.end : following.start] and not _other_line_end(
        text[name.end : following.start]
    ):
        return True  # on the same line: an argument
    return _column(text, following.start) > _column(text, code[index].start)


def _other_line_end(gap: str) -> bool:
    return any(end in gap for end in ("\r", "\f", "\x85", "\u2028", "\u2029"))


def _line_start(text: str, offset: int) -> int:
    return (
        max(text.rfind(end, 0, offset) for end in ("\n", "\r", "\f", "\x85", "\u2028", "\u2029"))
        + 1
    )


def _column(text: str, offset: int) -> int:
    return offset - _line_start(text, offset)
