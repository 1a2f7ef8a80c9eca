"""Coq's comments and strings, read as Coq 8.16's lexer reads them (``CLexer``).

The scan looks for shapes in the code only, so it must agree with coqc on where comments and
strings begin and end; one disagreement hides any command from it. Coq's rules:

- a string is ``"`` ... ``"``; a ``"`` inside is written ``""``, and ``\\`` is an ordinary
  character (``"\\"`` is a whole string);
- ``(*`` opens a comment anywhere outside a string (``(*)`` too); comments nest, and inside a
  comment string literals are read as strings, so a ``*)`` or ``(*`` in such a string does not
  count (``(* " *) " *)`` is one comment: coqc only warns ``comment-terminator-in-string``);
- an unterminated string or comment is a lexer error at the end of the file, but the sentences
  before it have already run; so it is refused here (fail closed), never guessed at.
"""

from __future__ import annotations


class CoqLexError(ValueError):
    """Text coqc's lexer refuses; the scan refuses it too."""


def code_only(text: str) -> str:
    """``text`` with every comment and every string's contents blanked (line breaks and the
    strings' quotes kept, so positions and "a string follows" stay visible)."""
    out = list(text)
    i, n, depth, start = 0, len(text), 0, 0

    def blank(first: int, end: int) -> None:
        for k in range(first, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            if end is None:
                what = "a string in a comment" if depth else "a string"
                raise CoqLexError(f"{what} that never ends (Coq's lexer refuses it)")
            if depth == 0:  # inside a comment, the whole comment is blanked when it ends
                blank(i + 1, end - 1)
            i = end
        elif text.startswith("(*", i):
            if depth == 0:
                start = i
            depth += 1
            i += 2
        elif depth and text.startswith("*)", i):
            depth -= 1
            i += 2
            if depth == 0:
                blank(start, i)
        else:
            i += 1
    if depth:
        raise CoqLexError("a comment that never ends (Coq's lexer refuses it)")
    return "".join(out)


def _string_end(text: str, opening: int) -> int | None:
    """The index just after the string opened at ``opening`` (``""`` is a quote inside it)."""
    i = opening + 1
    while True:
        close = text.find('"', i)
        if close == -1:
            return None
        if text.startswith('""', close):
            i = close + 2
            continue
        return close + 1
