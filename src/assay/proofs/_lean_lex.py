"""Lean 4 source as tokens: what the scan judges, read the way Lean's own tokenizer reads it.

The scan must see exactly the identifiers Lean sees, so this follows Lean's token functions
(``Lean.Parser.Basic``): nested ``/- -/`` comments (doc comments too), ``--`` comments, string
literals with escapes, interpolated strings (``s!"a {code} b"``: the code between the braces
is lexed as code, strings and comments inside it included), raw strings (``r"..."``,
``r#"..."#``), character literals (``'"'``, ``'\\''``), numbers, and identifiers with dotted
parts, where a part may be a ``«guillemet»`` name holding anything (spaces, newlines, a dot).

Where this reading and Lean's could differ, it errs toward seeing *more* code, never less:
identifier characters are Lean's narrowest definition (older releases), so an identifier is
never read longer than Lean reads it, and a word it hides cannot merge into a neighbour. What
cannot be read with certainty raises ``LeanLexError`` and the scan refuses the file: an
unterminated comment, string, character or guillemet name; a ``{`` inside a string not right
after ``s!`` (some syntax, e.g. ``throwError "..."``, interpolates strings without a ``!``
marker, so a brace there might be code; ``panic! "{"`` is a plain string); an apostrophe glued
to a non-ASCII symbol that could also open a character literal (``×'"'``: which one Lean reads
depends on its token table); and a number glued to an identifier character (``0x0run_cmd``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TokenKind = Literal["ident", "string", "char", "number", "symbol", "hash_command", "backtick"]


class LeanLexError(ValueError):
    """The source cannot be read with certainty; the message says what and where."""


@dataclass(frozen=True)
class Token:
    """One Lean token: its kind, its text and where it is in the source."""

    kind: TokenKind
    text: str
    """The source text of the token (for an identifier: as written, guillemets included)."""
    offset: int
    parts: tuple[str, ...] = ()
    """An identifier's name parts, unescaped (``«a.b».c`` has the parts ``a.b`` and ``c``)."""
    escaped: bool = False
    """An identifier with at least one ``«guillemet»`` part."""


def _is_letter_like(c: str) -> bool:
    v = ord(c)
    return (
        (0x3B1 <= v <= 0x3C9 and v != 0x3BB)
        or (0x391 <= v <= 0x3A9 and v not in (0x3A0, 0x3A3))
        or (0x3CA <= v <= 0x3FB)
        or (0x1F00 <= v <= 0x1FFE)
        or (0x2100 <= v <= 0x214F)
        or (0x1D49C <= v <= 0x1D59F)
    )


def _is_subscript_alnum(c: str) -> bool:
    v = ord(c)
    return 0x2080 <= v <= 0x2089 or 0x2090 <= v <= 0x209C or 0x1D62 <= v <= 0x1D6A


def is_id_first(c: str) -> bool:
    """Lean's ``isIdFirst``: ASCII letters, ``_`` and the letter-like ranges (not λ, Π, Σ)."""
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "_" or _is_letter_like(c)


def is_id_rest(c: str) -> bool:
    """Lean's ``isIdRest``: also ASCII digits, ``'``, ``!``, ``?`` and subscripts."""
    return is_id_first(c) or ("0" <= c <= "9") or c in "'!?" or _is_subscript_alnum(c)


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line}"


MAX_INTERPOLATION_DEPTH = 32
"""Interpolated strings nested deeper than this are refused: the lexer reads each level with
a recursive call, and a candidate must not be able to exhaust the verifier's stack (a
``RecursionError`` would be assay's ``error``, not a finding about the work)."""


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.out: list[Token] = []
        self.depth = 0
        """How many interpolations the lexer is inside now."""

    def fail(self, what: str, offset: int) -> LeanLexError:
        """The error for ``what`` at ``offset`` (line and column named)."""
        return LeanLexError(f"{what} ({_where(self.text, offset)})")

    def run(self, i: int, *, until_brace: bool) -> int:
        """Lex from ``i``; with ``until_brace``, stop at the ``}`` closing an interpolation."""
        text, n = self.text, self.n
        depth = 0
        while i < n:
            c = text[i]
            if c.isspace():
                i += 1
            elif text.startswith("--", i):
                end = text.find("\n", i)
                i = n if end == -1 else end
            elif text.startswith("/-", i):
                i = self.block_comment(i)
            elif c == '"':
                i = self.string(i)
            elif c == "'":
                i = self.apostrophe(i)
            elif c == "r" and self.raw_string_ahead(i):
                i = self.raw_string(i)
            elif is_id_first(c) or c == "«":
                i = self.ident(i)
            elif "0" <= c <= "9":
                i = self.number(i)
            elif c == "#" and i + 1 < n and (is_id_first(text[i + 1]) or text[i + 1] == "«"):
                start = i
                i = self.ident(i + 1)
                name = self.out.pop()
                self.out.append(Token("hash_command", "#" + name.text, start, name.parts))
            elif c == "`":
                self.out.append(Token("backtick", c, i))
                i += 1
            elif c == "»":
                raise self.fail("a stray '»'", i)
            else:
                if until_brace and c == "{":
                    depth += 1
                elif until_brace and c == "}":
                    if depth == 0:
                        return i + 1
                    depth -= 1
                self.out.append(Token("symbol", c, i))
                i += 1
        if until_brace:
            raise self.fail("an unterminated interpolation in a string", n)
        return i

    def digits(self, i: int, allowed: str) -> int:
        """The end of a run of ``allowed`` digits from ``i``, ``_`` separators included (newer
        releases read ``1_000`` as one number; older ones as ``1`` and ``_000``: either way the
        glued-character check in ``number`` refuses anything that could hide a word)."""
        text, n = self.text, self.n
        while i < n and (
            text[i] in allowed or (text[i] == "_" and i + 1 < n and text[i + 1] in allowed)
        ):
            i += 1
        return i

    def number(self, i: int) -> int:
        """A number as Lean's ``numberFnAux`` reads it: ``0x``/``0b``/``0o`` and their digits, or
        decimal digits with an optional ``.`` fraction and ``e`` exponent (a scientific literal).

        Lean starts a new token right after the number, so ``0x0run_cmd`` is ``0x0`` and
        ``run_cmd``. Releases differ in the details (``_`` separators, a trailing ``.``), so a
        number glued to a character that can start an identifier is refused: the lexer never
        has to know where exactly Lean ends the number for a word to stay visible.
        """
        text, n, start = self.text, self.n, i
        radix = text[i + 1 : i + 2].lower() if text[i] == "0" else ""
        if radix in ("x", "b", "o"):
            allowed = {"x": "0123456789abcdefABCDEF", "b": "01", "o": "01234567"}[radix]
            i = self.digits(i + 2, allowed)
        else:
            decimal = "0123456789"
            i = self.digits(i, decimal)
            if i + 1 < n and text[i] == "." and text[i + 1] in decimal:
                i = self.digits(i + 1, decimal)
            if i < n and text[i] in "eE":
                j = i + 2 if i + 1 < n and text[i + 1] in "+-" else i + 1
                if j < n and text[j] in decimal:
                    i = self.digits(j, decimal)
        if i < n and (is_id_first(text[i]) or text[i] == "«"):
            raise self.fail(
                f"a number glued to {text[i]!r} (where Lean ends the number is not certain)", i
            )
        self.out.append(Token("number", text[start:i], start))
        return i

    def block_comment(self, i: int) -> int:
        """The end of the (nested) block comment opening at ``i``."""
        start, depth, i = i, 1, i + 2
        while i < self.n:
            if self.text.startswith("/-", i):
                depth, i = depth + 1, i + 2
            elif self.text.startswith("-/", i):
                depth, i = depth - 1, i + 2
                if depth == 0:
                    return i
            else:
                i += 1
        raise self.fail("an unterminated /- comment", start)

    def after(self, *texts: str) -> bool:
        """Whether the last token is exactly one of the one-part identifier tokens ``texts``."""
        last = self.out[-1] if self.out else None
        return last is not None and last.kind == "ident" and last.text in texts

    def string(self, i: int) -> int:
        """A string literal; interpolated (``{code}`` lexed as code) only right after ``s!``.

        ``s!`` is core syntax (``Init``) in every release, so it is always the token that takes
        an interpolated string. ``f!`` and ``m!`` are tokens only where a module defining them is
        imported (``m!`` lives in ``Lean``; ``f!`` moved into ``Init`` only recently); elsewhere
        they are ordinary identifiers (``def m! ...``) followed by a plain string. Any other
        string is plain (``panic! "{"``, ``note! "{"``). A ``{`` in a plain string, or after
        ``f!``/``m!``, is refused: some syntax interpolates strings without a ``!`` marker
        (``throwError "..."``), so a brace there might be code, and the two readings would
        disagree on where the string ends.
        """
        start, interpolated = i, self.after("s!")
        ambiguous = self.after("f!", "m!")
        i += 1
        while i < self.n:
            c = self.text[i]
            if c == "\\":
                i += 2
            elif c == '"':
                self.out.append(Token("string", self.text[start : i + 1], start))
                return i + 1
            elif c == "{" and interpolated:
                self.out.append(Token("string", self.text[start:i], start))
                if self.depth >= MAX_INTERPOLATION_DEPTH:
                    raise self.fail(
                        f"interpolated strings nested more than {MAX_INTERPOLATION_DEPTH} deep", i
                    )
                self.depth += 1
                i = self.run(i + 1, until_brace=True)
                self.depth -= 1
                start = i
            elif c == "{" and ambiguous:
                raise self.fail(
                    "a '{' in a string after f! or m! (interpolated only where the module "
                    "defining it is imported)",
                    i,
                )
            elif c == "{":
                raise self.fail("a '{' inside a string literal (it may be interpolated code)", i)
            else:
                i += 1
        raise self.fail("an unterminated string literal", start)

    def apostrophe(self, i: int) -> int:
        """A character literal (``'c'``, ``'\\e'``), or part of a symbol token.

        Lean reads ``'`` followed by ``'`` as a token (Mathlib's ``f '' s``), and a ``'`` glued
        to a non-ASCII symbol can end that symbol's token (``f ⁻¹' s``, ``α ×' β``); anywhere
        else it starts a character literal. Glued to a non-ASCII symbol where a character
        literal could also start (``×'"'``), which one Lean reads depends on its token table,
        so it is refused. Every other character literal Lean accepts is read here as one; any
        other apostrophe that starts a token is refused, since Lean would not read it either.
        """
        text = self.text
        if text.startswith("''", i):
            self.out.append(Token("symbol", "''", i))
            return i + 2
        close = self.char_end(i)
        last = self.out[-1] if self.out else None
        glued = (
            last is not None
            and last.kind == "symbol"
            and last.offset + len(last.text) == i
            and not last.text.isascii()
        )
        if glued and close is not None:
            # `×'"'`: Lean reads `×'` (a token) and then a string if `×'` is in its token table,
            # and `×` then the character `'"'` if not; the table is not known here
            raise self.fail(
                f"an apostrophe after {text[i - 1]!r} that may end a symbol token or start a "
                "character literal",
                i,
            )
        if close is not None:
            self.out.append(Token("char", text[i : close + 1], i))
            return close + 1
        if glued:  # ⁻¹' is one token
            self.out.append(Token("symbol", "'", i))
            return i + 1
        raise self.fail("an unreadable character literal", i)

    def char_end(self, i: int) -> int | None:
        """Where the character literal opening at ``i`` closes, or None when there is none."""
        text = self.text
        if i + 1 < self.n and text[i + 1] == "\\":
            close = text.find("'", i + 3)
            if close == -1 or close > i + 12 or "\n" in text[i:close]:
                return None
            return close
        close = i + 2
        if close >= self.n or text[close] != "'" or text[i + 1] == "\n":
            return None
        return close

    def raw_string_ahead(self, i: int) -> bool:
        """Whether a raw string literal (``r#"..."#``) opens at ``i``."""
        j = i + 1
        while j < self.n and self.text[j] == "#":
            j += 1
        return j < self.n and self.text[j] == '"'

    def raw_string(self, i: int) -> int:
        """The end of the raw string literal opening at ``i``."""
        j = i + 1
        while self.text[j] == "#":
            j += 1
        closer = '"' + "#" * (j - i - 1)
        end = self.text.find(closer, j + 1)
        if end == -1:
            raise self.fail("an unterminated raw string literal", i)
        end += len(closer)
        self.out.append(Token("string", self.text[i:end], i))
        return end

    def ident(self, i: int) -> int:
        """The end of the (dotted, possibly «escaped») identifier starting at ``i``."""
        text, n = self.text, self.n
        start, parts, escaped = i, [], False
        while True:
            if i < n and text[i] == "«":
                close = text.find("»", i + 1)
                if close == -1:
                    raise self.fail("an unterminated «name»", i)
                parts.append(text[i + 1 : close])
                escaped, i = True, close + 1
            else:
                j = i + 1
                while j < n and is_id_rest(text[j]):
                    j += 1
                parts.append(text[i:j])
                i = j
            if i + 1 < n and text[i] == "." and (is_id_first(text[i + 1]) or text[i + 1] == "«"):
                i += 1
                continue
            break
        self.out.append(Token("ident", text[start:i], start, tuple(parts), escaped))
        return i


def tokens(text: str) -> list[Token]:
    """Every token of ``text``, comments and whitespace left out; raises LeanLexError."""
    lexer = _Lexer(text)
    lexer.run(0, until_brace=False)
    return lexer.out


def header_imports(text: str) -> list[str]:
    """The modules a header's leading ``import`` lines name (dotted), in order.

    Raises LeanLexError for a header that cannot be read or whose imports are not plain names.
    """
    found: list[str] = []
    toks = tokens(text)
    i = 0
    while i < len(toks) and toks[i].kind == "ident" and toks[i].text == "import":
        if i + 1 >= len(toks) or toks[i + 1].kind != "ident" or toks[i + 1].escaped:
            raise LeanLexError("an import that does not name a plain module")
        found.append(".".join(toks[i + 1].parts))
        i += 2
    return found
