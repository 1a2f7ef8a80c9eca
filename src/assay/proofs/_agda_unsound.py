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
solution declares no data or record type (``data``, ``codata``, and any ``record`` but a record
value ``record { … }``: a declaration whose parameters hold ``=`` once read as an update), writes
no ``module`` but its own header ``module Name where`` (an application's ``=`` hid behind a
``λ where`` in a module's parameters) and no explicit layout braces (``where {``), and opens or imports modules
only in two shapes that cannot carry arguments (``_applied``): at the top level with import
directives and the next code at column 0, and inside a block only ``open M`` ending its line and
the block (``where open ≡-Reasoning`` closing a top-level clause). Reading Agda's layout from
columns (arguments on a later line inside a block) was bypassed twice, and ``as`` is an ordinary
name (``open S as id comp`` applies ``S``). The cost is a false reject of solutions that define
their own types, update records, open an applied module or open one inside a block that goes on
(use qualified names, library types, or ``open`` at the top level): the statement and its
``header`` are the author's and may declare what they need. Hole obligations are the author's
files too, and a hole candidate can declare nothing, so the rule is for whole-file solutions only.
"""

from __future__ import annotations

import bisect

from assay.proofs._agda_lex import LINE_END, Token, code_only

_LAYOUT = frozenset(
    {
        "where",
        "let",
        "do",
        "of",
        "mutual",
        "private",
        "abstract",
        "instance",
        "macro",
        "postulate",
        "field",
        "variable",
        "primitive",
        "opaque",
    }
)
"""Keywords that open a layout block."""


_REFLECTION = frozenset({"unquoteDecl", "unquoteDef", "unquote", "macro", "tactic"})
"""Reflection that runs code at type-checking time, which can declare (adv-unsound4)."""
_DECLARING = frozenset(
    {"declareData", "defineData", "declareDef", "defineFun", "declarePostulate", "freshName"}
)
"""Reflection primitives that declare, however the solution names them (``R.declareData``)."""


def solution_refusals(found: list[Token], text: str) -> list[str]:
    """The refused declarations among ``found`` (the tokens of ``text``, a whole-file solution)."""
    code = [t for t in code_only(found) if t.kind != "pragma"]
    starts = _lines(text)
    lines = [_line(starts, t.start) for t in code]
    line_end = [len(code)] * len(code)  # each token's first follower on a later line
    for index in range(len(code) - 2, -1, -1):
        later = lines[index + 1] != lines[index]
        line_end[index] = index + 1 if later else line_end[index + 1]
    first_module = next((i for i, token in enumerate(code) if token.text == "module"), -1)
    shapes: list[str] = []
    for index, token in enumerate(code):
        if (
            token.kind == "symbol"
            and token.text == "{"
            and index
            and code[index - 1].text in _LAYOUT
        ):
            shapes.append("explicit layout braces (`where {`, `let {`): write the block by layout")
        if token.kind != "word":
            continue
        if token.text in _REFLECTION or token.text.rsplit(".", 1)[-1] in _DECLARING:
            shapes.append(
                f"`{token.text}` (a solution runs no reflection that declares: Agda 2.6.4's "
                "`declareData` makes a data type without the word `data`, agda/agda#8564)"
            )
        elif token.text in ("data", "codata"):
            shapes.append(
                f"a `{token.text}` declaration (a solution declares no data or record type: "
                "agda/agda#8564)"
            )
        elif token.text == "record" and not (index + 1 < len(code) and code[index + 1].text == "{"):
            shapes.append(
                "a `record` declaration or update (a solution declares no data or record type: "
                "agda/agda#8564; a record value is written `record { … }`)"
            )
        elif token.text == "module" and not _the_header(code, index, first_module):
            shapes.append(
                "a `module` other than the file's own `module Name where` (agda/agda#8696: a "
                "solution applies no module to arguments, and an application hid behind a "
                "`λ where` in a module's parameters)"
            )
        elif token.text in ("open", "import") and _applied(code, index, starts, line_end):
            shapes.append(
                f"`{token.text}` of a module applied to arguments (agda/agda#8696: a solution "
                "applies no module to arguments; use qualified names)"
            )
    return list(dict.fromkeys(shapes))


def _the_header(code: list[Token], index: int, first: int) -> bool:
    """``module`` at ``code[index]`` is the file's own header, ``module Name where``: the first
    ``module`` of the file, a plain name, then ``where``. Any other ``module`` is refused: an
    application's ``=`` can hide behind a ``where`` inside its parameters (``λ where``), and a
    solution needs no module of its own."""
    return (
        index == first
        and index + 2 < len(code)
        and code[index + 1].kind == "word"
        and code[index + 2].text == "where"
    )


def _applied(code: list[Token], index: int, starts: list[int], line_end: list[int]) -> bool:
    """``open``/``import`` at ``code[index]`` may apply a module to arguments. Agda's layout
    decides what an argument is, and two rounds of reading it from columns were bypassed, so
    only two shapes are taken as unapplied:

    - at the top level (the line's first token, at column 0): ``open import M``, ``import M``
      or ``open M``, then on the same line only ``as N`` (an import's), ``using (…)``,
      ``hiding (…)``, ``renaming (…)`` and ``public``, and the next code at column 0;
    - anywhere else: ``open M`` alone at the end of its line, the next code at column 0 (the
      block ends there: ``where open ≡-Reasoning`` closing a top-level clause).

    ``as`` is an ordinary name in Agda (``open S as id comp`` applies ``S``), so it is read as
    the as-clause only after an import's name and only as ``as N`` followed by a directive or
    the end of the line."""
    if code[index].text == "import" and index and code[index - 1].text == "open":
        return False  # read from its ``open``
    opened = code[index].text == "open"
    at = index + 1
    imported = not opened
    if opened and at < len(code) and code[at].text == "import":
        at, imported = at + 1, True
    if at >= len(code):
        return True
    line = _line(starts, code[index].start)
    if _line(starts, code[at].start) != line:
        return True  # the module's name on a later line: read nothing into it
    top = _column(starts, code[index].start) == 0
    end = line_end[at]  # the rest of the line is code[at + 1 : end]
    if end < len(code) and _column(starts, code[end].start) != 0:
        return True  # a later line inside the block: it may continue this declaration
    if not top:
        return not (opened and not imported and end == at + 1)
    rest = code[at + 1 : end]  # a top-level line's own tokens: each line is read once
    if imported and len(rest) >= 2 and rest[0].text == "as" and rest[1].kind == "word":
        rest = rest[2:]
    return not _directives_only(rest)


def _directives_only(tokens: list[Token]) -> bool:
    """``tokens`` are import directives and nothing else: ``using``, ``hiding`` and
    ``renaming`` each with one parenthesised group, ``public``."""
    at = 0
    while at < len(tokens):
        word = tokens[at].text
        if word == "public":
            at += 1
            continue
        if word not in ("using", "hiding", "renaming"):
            return False
        if at + 1 >= len(tokens) or tokens[at + 1].text != "(":
            return False
        depth, at = 0, at + 1
        while at < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[at].text, 0)
            at += 1
            if depth == 0:
                break
        if depth != 0:
            return False
    return True


def _lines(text: str) -> list[int]:
    """Where each of Agda's lines starts (any of its line endings)."""
    return [0, *(end.end() for end in LINE_END.finditer(text))]


def _line(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


def _column(starts: list[int], offset: int) -> int:
    return offset - starts[_line(starts, offset)]
