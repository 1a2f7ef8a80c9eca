"""Refusing the mutual groups through which Agda's positivity checker is fooled (agda/agda#8564).

Both Agdas assay runs (2.6.2.2 and 2.6.4.3) accept a proof of ``⊥`` under ``--safe`` when a data
or record type is defined in one mutual group with a function whose clause takes fewer arguments
than its type (``P = Negate`` for ``P : (x : ⊤) → ⊤-rec x (Set → Set)``): the checker does not
see the negative occurrence of the type behind it, and ``1 + 1 ≡ 3`` follows. Until an Agda
with the fix judges, the scan refuses every way a data or record type can share a mutual group
with another definition, read from Agda's tokens and its layout (a declaration's column):

- a ``mutual`` (or ``interleaved mutual``) block holding a data or record declaration;
- a data or record type declared apart from its definition (``data X : Set`` with no
  ``where``, or ``data X where`` with no type), which makes everything between one group;
- a data or record declaration while a signature above it, in its block or an enclosing one,
  has no clause yet (``P : T``, then ``data X …``, then ``P = …``: Agda's implicit mutual
  group).

Conservative by design: induction-recursion and data types defined with functions in one group
are refused (rare in proof tasks; the refusal names the shape); mutually recursive functions
alone, and data types declared whole, are not.
"""

from __future__ import annotations

import bisect
import re

from assay.proofs._agda_lex import KEYWORDS, Token, code_only

_LINE_END = re.compile("\r\n|[\n\r\f\x85\u2028\u2029]")
_DATA = "a data or record type"


def mutual_group_refusals(found: list[Token], text: str) -> list[str]:
    """The shapes above among ``found`` (the tokens of ``text``)."""
    code = [t for t in code_only(found) if t.kind != "pragma"]
    if not any(t.text in ("data", "record") for t in code):
        return []
    line_starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def line_of(token: Token) -> int:
        return bisect.bisect_right(line_starts, token.start) - 1

    heads: list[int] = []  # indexes of the first code token of each line
    for index, token in enumerate(code):
        if index == 0 or line_of(code[index - 1]) != line_of(token):
            heads.append(index)
    column = {i: code[i].start - line_starts[line_of(code[i])] for i in heads}
    line_head: list[int] = []  # for each code token, the position in ``heads`` of its line's
    for position, head in enumerate(heads):
        stop = heads[position + 1] if position + 1 < len(heads) else len(code)
        line_head += [position] * (stop - head)
    ends = [len(code)] * len(heads)  # for each line, the next line starting at its column or left
    waiting: list[int] = []
    for position, head in enumerate(heads):
        while waiting and column[heads[waiting[-1]]] >= column[head]:
            ends[waiting.pop()] = head
        waiting.append(position)

    def end_of(index: int) -> int:
        """The end (exclusive) of the declaration whose line holds ``code[index]``."""
        return ends[line_head[index]]

    shapes: list[str] = []
    declarations = [i for i, t in enumerate(code) if _declares_a_type(code, i)]
    for index in declarations:
        span = code[index : end_of(index)]
        words = [t.text for t in span]
        if "where" not in words:
            shapes.append(f"{_DATA} declared apart from its definition (no `where`)")
        elif ":" not in [t.text for t in _depth_zero(span[: words.index("where")])]:
            shapes.append(f"{_DATA} defined apart from its declaration (no type)")
    for index, token in enumerate(code):
        if token.text == "mutual" and any(index < d < end_of(index) for d in declarations):
            shapes.append(f"{_DATA} inside a `mutual` block")
    if _declared_between_a_signature_and_its_clauses(code, heads, column, set(declarations)):
        shapes.append(f"{_DATA} declared between a signature and its clauses (one mutual group)")
    if not shapes:
        return []
    why = "Agda's positivity checker is unsound in such a group: agda/agda#8564"
    return [f"{'; '.join(dict.fromkeys(shapes))} ({why})"]


def _declares_a_type(code: list[Token], index: int) -> bool:
    """``code[index]`` opens a data or record declaration: ``data`` always; ``record`` unless
    a ``{`` comes before any ``:`` or ``where`` (a record expression or update)."""
    if code[index].kind != "word" or code[index].text not in ("data", "record"):
        return False
    if code[index].text == "data":
        return True
    for token in _depth_zero(code[index + 1 :]):
        if token.text == "{":
            return False
        if token.text in (":", "where", "="):
            return True
    return True


def _depth_zero(tokens: list[Token]) -> list[Token]:
    """The tokens outside any bracket (the first ``{`` at depth zero included)."""
    out: list[Token] = []
    depth = 0
    for token in tokens:
        if token.kind == "symbol" and token.text in ("(", "{", "{{", "⦃", "["):
            if depth == 0:
                out.append(token)
            depth += 1
        elif token.kind == "symbol" and token.text in (")", "}", "}}", "⦄", "]"):
            depth -= 1
        elif depth == 0:
            out.append(token)
    return out


def _declared_between_a_signature_and_its_clauses(
    code: list[Token], heads: list[int], column: dict[int, int], declarations: set[int]
) -> bool:
    """Whether a data or record declaration comes while a signature in its block or an
    enclosing one has no clause yet. A clause is any declaration at the signature's column that
    names it (or, for a mixfix name, one of its parts) before its ``=``: read generously, since
    a signature taken for defined only lets a group through that Agda then judges whole."""
    pending: dict[int, set[str]] = {}
    for position, head in enumerate(heads):
        here = column[head]
        for deeper in [c for c in pending if c > here]:
            del pending[deeper]
        stop = heads[position + 1] if position + 1 < len(heads) else len(code)
        line = code[head:stop]
        if any(head <= d < stop for d in declarations):
            if any(names for c, names in pending.items() if c <= here):
                return True
            continue
        names = _signature_names(line)
        if names:
            pending.setdefault(here, set()).update(names)
            continue
        equals = next((i for i, t in enumerate(line) if t.text == "="), len(line))
        before = {t.text for t in line[:equals]}
        for name in list(pending.get(here, ())):
            parts = {part for part in name.split("_") if part} or {name}
            if name in before or parts & before:
                pending[here].discard(name)
    return False


def _signature_names(line: list[Token]) -> list[str]:
    """The names a line declares when it is a signature (``f g : T``), else []."""
    names: list[str] = []
    for token in line:
        if token.text == ":":
            return names
        if token.kind != "word" or token.text in KEYWORDS:
            return []
        names.append(token.text)
    return []
