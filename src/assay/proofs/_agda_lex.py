"""Agda's lexer, as far as assay needs it: one reading of a file for the scan, the staging and holes.

Every decision assay makes about Agda text (the refused shapes, the module name a file is staged
under, where a hole is, whether a candidate is one term) is read from these tokens, so no two
parts of assay can read the same bytes differently. The rules follow Agda 2.6.2.2's own lexer
(``Agda/Syntax/Parser/Lexer.x``, ``LexActions.foolAlex``, ``StringLiterals``, ``Comments``):

- line endings are converted as Agda converts them (CR LF, CR, FF, NEL, U+2028, U+2029 are
  all a line break, in comments and literals too);
- non-ASCII characters count as Agda counts them: Unicode spaces are spaces, printable letters
  and symbols are name characters, anything else is a lexical error;
- a token starting with ``--`` is a line comment (``a--b`` is one name; ``-->`` starts a
  comment); ``{- -}`` nest and know nothing of strings; ``{-# ... #-}`` is a pragma that ends at a
  whitespace-delimited ``#-}``; ``{! !}`` holes nest and are opaque;
- ``'`` starts a character literal only where a token starts (``f'`` is a name), and string and
  character literals follow Haskell's escapes (``\\&``, gaps ``\\   \\``, ``\\^A``, ``\\SOH``).

Where Agda would refuse the text (a tab, an unterminated comment, a bad escape) this lexer raises
``AgdaLexError``: text that cannot be read is never vouched for.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal, NamedTuple

TokenKind = Literal["word", "symbol", "string", "char", "comment", "pragma", "hole"]

KEYWORDS = frozenset(
    {
        "abstract", "codata", "coinductive", "constructor", "data", "do", "eta-equality",
        "field", "forall", "hiding", "import", "in", "inductive", "infix", "infixl", "infixr",
        "instance", "interleaved", "let", "macro", "module", "mutual", "no-eta-equality",
        "opaque", "open", "overlap", "pattern", "postulate", "primitive", "private", "public",
        "quote", "quoteContext", "quoteGoal", "quoteTerm", "record", "renaming", "rewrite",
        "syntax", "tactic", "unfolding", "unquote", "unquoteDecl", "unquoteDef", "using",
        "variable", "where", "with", "Set", "Prop",
    }
)  # fmt: skip
"""Agda's reserved words (2.6.2.2's and the later releases', so a newer Agda reads no less)."""

OPENERS = {"(": ")", "(|": ")", "{": "}", "{{": "}", "⦃": "⦄", "⦇": "⦈"}
CLOSERS = frozenset({")", "|)", "}", "⦄", "⦈"})
_CLOSE_CLASS = {")": ")", "|)": ")", "}": "}", "⦄": "⦄", "⦈": "⦈"}

_ASCII_OP = frozenset("-!#$%&*+/<=>^|~?`[],:")
_ALPHA = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_OCT = frozenset("01234567")
_WHITE = frozenset(" \t\n\r\f\v")
# fmt: off
_ESCAPES = (
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
    "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB",
    "ESC", "FS", "GS", "RS", "US", "SP", "DEL", "a", "b", "f", "n", "r", "t", "v", "\\", '"', "'",
)
"""Haskell's named escapes (``StringLiterals.sillyEscapeChars``)."""
# fmt: on
_NOT_PRINTABLE = frozenset({"Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"})


class AgdaLexError(ValueError):
    """Text Agda's lexer would refuse; the message names the problem, line and column."""

    def __init__(self, problem: str, text: str, offset: int) -> None:
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.problem = problem
        super().__init__(f"{problem} at line {line}, column {column}")


class Token(NamedTuple):
    """One token: its kind, its text and where it is in the original text."""

    kind: TokenKind
    text: str
    start: int
    end: int

    @property
    def parts(self) -> list[str]:
        """A (qualified) name's parts: ``A.B.c`` is A, B, c."""
        return self.text.split(".") if self.kind == "word" else []

    @property
    def pragma_words(self) -> list[str]:
        """A pragma's words between ``{-#`` and ``#-}``."""
        return self.text[3:-3].split() if self.kind == "pragma" else []


def _is_space(c: str) -> bool:
    """Haskell's ``isSpace``."""
    if c in _WHITE:
        return True
    code = ord(c)
    if code <= 0x377:
        return code == 0xA0
    return unicodedata.category(c) == "Zs"


def _fool(c: str) -> str:
    """``foolAlex``: the ASCII character Agda's lexer sees in place of ``c``."""
    if c.isascii():
        return c
    if _is_space(c):
        return " "
    category = unicodedata.category(c)
    if category in _NOT_PRINTABLE:
        return "\1"
    return "z" if category.startswith("L") else "+"


def _idchar(f: str) -> bool:
    return f in _ALPHA or f in _DIGITS or f in _ASCII_OP or f in "'\\+"


def _ident_start(fooled: str, i: int) -> bool:
    """An ``@ident`` can start at ``i``: ``($idstart # _) | \\ $nonalpha | _ $idchar``."""
    if i >= len(fooled):
        return False
    c = fooled[i]
    nxt = fooled[i + 1] if i + 1 < len(fooled) else ""
    if c == "_":
        return nxt != "" and _idchar(nxt)
    if c == "\\":
        return nxt != "" and _idchar(nxt) and nxt not in _ALPHA
    return c in _ALPHA or c in _DIGITS or c in _ASCII_OP or c == "+"


def _run(fooled: str, i: int) -> int:
    """The end of the run of name characters starting at ``i``."""
    return _IDRUN.match(fooled, i).end()  # type: ignore[union-attr]


def _skip_block(text: str, i: int, opener: str, closer: str, what: str) -> int:
    """``Comments.skipBlock``: nested opener/closer pairs, nothing else understood."""
    depth, j, n = 1, i + len(opener), len(text)
    while depth:
        if j >= n:
            raise AgdaLexError(f"an unterminated {what}", text, i)
        if text.startswith(opener, j):
            depth, j = depth + 1, j + len(opener)
        elif text.startswith(closer, j):
            depth, j = depth - 1, j + len(closer)
        else:
            j += 1
    return j


def _escape(text: str, k: int, start: int) -> int:
    """``StringLiterals.lexEscape`` from just after the backslash; returns the end offset."""
    n = len(text)
    if k >= n:
        raise AgdaLexError("an unterminated literal", text, start)
    c = text[k]
    if c == "^":
        if k + 1 < n and "@" <= text[k + 1] <= "_":
            return k + 2
        raise AgdaLexError("an invalid control-character escape", text, k)
    digits, base, j = _DIGITS, 10, k
    if c in ("x", "o"):
        digits, base, j = (_HEX, 16, k + 1) if c == "x" else (_OCT, 8, k + 1)
    if c in ("x", "o") or c in _DIGITS:
        end = j
        while end < n and text[end] in digits:
            end += 1
        if end == j or int(text[j:end], base) > 0x10FFFF:
            raise AgdaLexError("a numeric escape out of range", text, k)
        return end
    names = [name for name in _ESCAPES if text.startswith(name, k)]
    if not names:
        raise AgdaLexError("a bad escape code", text, k)
    return k + max(len(name) for name in names)


def _literal(text: str, i: int, delimiter: str) -> int:
    """``StringLiterals.lexString``; a character literal must hold exactly one character."""
    j, count, n = i + 1, 0, len(text)
    while True:
        if j >= n:
            raise AgdaLexError("an unterminated literal", text, i)
        c = text[j]
        if c == delimiter:
            j += 1
            break
        if c != "\\":
            j, count = j + 1, count + 1
            continue
        if j + 1 < n and text[j + 1] == "&":
            j += 2
        elif j + 1 < n and _is_space(text[j + 1]):
            j += 2
            while j < n and _is_space(text[j]):
                j += 1
            if j >= n or text[j] != "\\":
                raise AgdaLexError("a non-space in a string gap", text, j)
            j += 1
        else:
            j, count = _escape(text, j + 1, i), count + 1
    if delimiter == "'" and count != 1:
        raise AgdaLexError("a character literal that is not one character", text, i)
    return j


def _pragma(text: str, i: int) -> int:
    """A pragma ends at the first whitespace-delimited ``#-}`` (``--safe#-}`` does not end it)."""
    j, n = i + 3, len(text)
    while True:
        while j < n and text[j] != "\t" and _is_space(text[j]):
            j += 1
        if j >= n:
            raise AgdaLexError("an unterminated pragma", text, i)
        if text[j] == "\t":
            raise AgdaLexError("a tab character", text, j)
        end = j
        while end < n and not _is_space(text[end]):
            end += 1
        if text[j:end] == "#-}":
            return end
        j = end


LINE_ENDS = ("\r\n", "\r", "\f", "\x85", "\u2028", "\u2029")
"""What Agda turns into ``\n`` before lexing (``convertLineEndings``): a line comment ends at
any of them, so ``-- x\rpostulate`` puts the postulate on a line of its own."""


LINE_END = re.compile("\r\n|[\n\r\f\x85\u2028\u2029]")
"""One of Agda's line endings (a CR LF pair is one), as every reading of lines and columns
here counts them."""
_ONE_CHAR_ENDS = {ord(c): "\n" for c in LINE_ENDS if len(c) == 1}


def normalise(text: str) -> tuple[str, list[int] | None]:
    """``text`` with Agda's line endings made ``\n``, and for each of its characters (plus the
    end) the offset in ``text`` it came from; None when every offset is unchanged (only a CR LF
    pair shifts them)."""
    if "\r\n" not in text:
        return text.translate(_ONE_CHAR_ENDS), None
    out: list[str] = []
    origin: list[int] = []
    i, n = 0, len(text)
    while i < n:
        origin.append(i)
        if text.startswith("\r\n", i):
            out.append("\n")
            i += 2
        else:
            out.append(text[i])
            i += 1
    origin.append(n)
    return "".join(out).translate(_ONE_CHAR_ENDS), origin


MAX_SOURCE_CHARS = 512 * 1024
"""The longest Agda text assay reads (five times agda-stdlib's largest file, 100 KB): lexing is
linear (about 2 µs a token), but a verifier must not spend seconds and hundreds of MiB on one
candidate's padding. Longer text is refused, saying so."""
_IDRUN = re.compile(r"[A-Za-z0-9_!#$%&*+/<=>^|~?`\[\],:'\\-]*")
_SPACES = re.compile(r"[ \n\r\f\v]+")
_PLAIN_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+") | (
    _ASCII_OP - {"-", "|"}
)
"""First characters (after ``foolAlex``) that can only start a name."""


def _fooled(text: str) -> str:
    """``foolAlex`` over the whole text (each distinct non-ASCII character classified once)."""
    table = {ord(c): _fool(c) for c in set(text) if not c.isascii()}
    return text.translate(table)


def tokens(original: str) -> list[Token]:
    """Every token of ``original`` but whitespace, in order, as Agda reads it (after its own
    line-ending conversion); offsets and texts are the original's. Raises AgdaLexError where
    Agda would, with Agda's line and column."""
    if len(original) > MAX_SOURCE_CHARS:
        raise AgdaLexError(f"a text longer than {MAX_SOURCE_CHARS} characters", "", 0)
    text, origin = normalise(original)
    fooled = _fooled(text)
    out: list[Token] = []
    i, n = 0, len(text)

    def add(kind: TokenKind, end: int) -> None:
        nonlocal i
        start, stop = (i, end) if origin is None else (origin[i], origin[end])
        out.append(Token(kind, original[start:stop], start, stop))
        i = end

    def word_end(start: int) -> int:
        """Where a (qualified) name starting at ``start`` ends."""
        end = _run(fooled, start)
        if end < n and text[end] == "}" and text[end - 1] == "-":
            raise AgdaLexError("a comment end -} outside a comment", text, end - 1)
        while end + 1 < n and text[end] == "." and _ident_start(fooled, end + 1):
            end = _run(fooled, end + 1)
        return end

    while i < n:
        c = fooled[i]
        if c in _PLAIN_START:  # the common case first: a name that can be nothing else
            add("word", word_end(i))
        elif c in " \n\r\f\v":
            i = _SPACES.match(fooled, i).end()  # type: ignore[union-attr]
        elif c == "\t":
            raise AgdaLexError("a tab character", text, i)
        elif text.startswith("{{-", i):
            # Agda 2.6.2.2 reads `{` and a comment; its lexer's own rule says `{{` then `-`.
            raise AgdaLexError("`{{-`, which Agda versions read differently", text, i)
        elif text.startswith("{-#", i):
            add("pragma", _pragma(text, i))
        elif text.startswith("{-", i):
            add("comment", _skip_block(text, i, "{-", "-}", "comment {-"))
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            run = _run(fooled, i)
            if run + 1 == end and text[run] == "}" and text[run - 1] == "-":
                # `--x-}` to the end of the line: Agda's rule `@ident "-}"` ties with the
                # comment and comes first, so it is a misplaced comment end (a parse error).
                raise AgdaLexError("a comment end -} outside a comment", text, run - 1)
            add("comment", end)
        elif text.startswith("{!", i):
            add("hole", _skip_block(text, i, "{!", "!}", "hole {!"))
        elif c in "\"'":
            add("string" if c == '"' else "char", _literal(text, i, c))
        elif (
            (text.startswith("{{", i) and not text.startswith("!", i + 2))
            or (text.startswith("(|", i) and i + 2 < n and fooled[i + 2] in _WHITE)
            or text.startswith("|)", i)
        ):
            add("symbol", i + 2)  # {{ (not {{!), (| before whitespace, |)
        elif c in "(){};@":
            add("symbol", i + 1)
        elif c == ".":
            end = i + 1
            while end < n and end < i + 3 and text[end] == ".":
                end += 1
            add("symbol", end)
        elif _ident_start(fooled, i):
            add("word", word_end(i))
        elif c in "\\_":
            add("symbol", i + 1)  # a lambda, or an underscore that starts no name
        else:
            raise AgdaLexError(f"a character Agda cannot read (U+{ord(text[i]):04X})", text, i)
    return out


def is_name_part(part: str) -> bool:
    """``part`` is one unqualified Agda name (not a reserved word), exactly as Agda lexes it."""
    try:
        found = tokens(part)
    except AgdaLexError:
        return False
    return (
        len(found) == 1
        and found[0].kind == "word"
        and found[0].text == part
        and "." not in part
        and part not in KEYWORDS
    )


def code_only(found: list[Token]) -> list[Token]:
    """The tokens that are program text: no comments."""
    return [t for t in found if t.kind != "comment"]


@dataclass(frozen=True)
class ModuleHeader:
    """The top-level ``module`` header as Agda reads it: its name, or why there is none usable."""

    name: str | None
    """None: no header (Agda names the module after its file)."""
    problem: str | None = None


def module_header(found: list[Token]) -> ModuleHeader:
    """The first ``module`` keyword outside any brackets, and the name that follows it.

    This one function gives the module name to the scan, the staging and the lane, so a file is
    always staged under the name it is scanned under. ``using (module M)`` in an import is inside
    brackets and is not a header.
    """
    code = code_only(found)
    depth = 0
    for index, token in enumerate(code):
        if token.kind in ("symbol", "word") and token.text in OPENERS:
            depth += 1
        elif token.kind in ("symbol", "word") and token.text in CLOSERS:
            depth = max(depth - 1, 0)
        elif depth == 0 and token.kind == "word" and token.text == "module":
            following = code[index + 1] if index + 1 < len(code) else None
            if following is None or following.kind != "word" or following.text in KEYWORDS:
                shown = following.text[:80] if following is not None else "nothing"
                return ModuleHeader(None, f"a module header Agda cannot name ({shown!r})")
            return ModuleHeader(following.text)
    return ModuleHeader(None)


def bracket_problem(found: list[Token]) -> str | None:
    """Why the brackets of ``found`` do not nest as one closed group, or None when they do."""
    stack: list[str] = []
    for token in code_only(found):
        if token.kind not in ("symbol", "word"):
            continue
        if token.text in OPENERS:
            stack += [OPENERS[token.text]] * (2 if token.text == "{{" else 1)  # }} is two }
        elif token.text in CLOSERS and (not stack or stack.pop() != _CLOSE_CLASS[token.text]):
            return f"an unmatched {token.text!r}"
    return f"an unclosed bracket (expected {stack[-1]!r})" if stack else None
