"""The Lean pre-filter: refuse, by tokens, every shape that could let a solution skip the kernel,
run code while it is judged, or read the trusted statement differently.

The source is read by ``_lean_lex`` exactly as Lean tokenizes it (comments, strings,
interpolations, raw strings, characters, «names»); what it cannot read is refused. Then:

* **words**, compared with whole identifier parts (``command_elab`` is one part, not ``elab``;
  ``Lean.ofReduceBool`` has the part ``ofReduceBool``): proof gaps (``sorry``, ``admit``),
  trusting compiled code instead of the kernel (``native_decide``, ``native`` as in ``decide
  +native``, ``implemented_by``, ``extern``, ``unsafe``, ``partial``, ``opaque``), ``axiom``,
  every metaprogramming command (``run_cmd``, ``elab``, ``macro``, ``syntax``, ``initialize``,
  ``simproc``, ...), library tactics known to run the solution's declarations as code
  (``add_aesop_rules``, Aesop's ``RuleTac`` types, ``plausible``, ``slim_check``, and an
  ``(add ...)`` clause after ``aesop``), and every declaration of notation or instances
  (``notation``, ``infix``, ``instance``, ``deriving``);
* **attributes** (``@[...]`` and ``attribute [...]``): only a small allow-list (``simp``,
  ``reducible``, ``ext``, ...); ``command_elab``, ``tactic``, ``init``, ``csimp``, ``instance``,
  ``implemented_by`` and every other attribute that registers code or instances is refused;
* **options**: ``set_option`` only for limits and linters (``maxHeartbeats``, ``maxRecDepth``,
  ``synthInstance.*``, ``linter.*``, ``pp.*``); ``debug.skipKernelTC`` and the rest are refused;
* **imports**: only the modules the trusted header imports, never ``Lean`` or ``Lake``; no
  ``prelude``, no ``module`` system header, no import after the header;
* **escapes**: ``#`` commands (``#eval``, ``#exit``), quotations and name literals (`` ` ``),
  ``«escaped»`` names (they spell any name, a newline included), and any name in the ``Lean`` or
  ``Lake`` namespaces.

Solutions may declare no instances and no notation at all: that is the simple rule, even though
the statement is elaborated in a module that never sees the solution (``_languages``). This is
a pre-filter, and an open-ended one: any library tactic may evaluate a declaration of the
solution, so the judgment assumes the solution's code runs while it is compiled. Its guards are
the separate compilation of the solution in a folder of its own (only its ``.olean`` is copied
out), the separate statement module, and the audit, which replays every declaration through
the kernel in a process where no solution code runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from assay.proofs._lean_lex import LeanLexError, Token, tokens

Shapes = list[str]
Callback = Callable[[str], None]

_WORDS: dict[str, tuple[str, ...]] = {
    "a proof gap": ("sorry", "sorryAx", "admit"),
    "an axiom": ("axiom",),
    "it trusts compiled code instead of the kernel": (
        "native_decide",
        "native",
        "ofReduceBool",
        "ofReduceNat",
        "reduceBool",
        "reduceNat",
        "trustCompiler",
        "implemented_by",
        "extern",
        "unsafe",
        "partial",
        "opaque",
    ),
    "it turns the kernel off": ("skipKernelTC",),
    "metaprogramming: code that runs while the file is judged": (
        "run_cmd",
        "run_elab",
        "run_meta",
        "run_tac",
        "by_elab",
        "elab",
        "elab_rules",
        "macro",
        "macro_rules",
        "syntax",
        "declare_syntax_cat",
        "initialize",
        "builtin_initialize",
        "simproc",
        "dsimproc",
        "simproc_decl",
        "dsimproc_decl",
        "builtin_simproc",
        "builtin_dsimproc",
        "builtin_simproc_decl",
        "register_simp_attr",
        "register_option",
        "register_builtin_option",
        "register_label_attr",
        "declare_config_elab",
        "declare_simp_like_tactic",
        "unif_hint",
        "binder_predicate",
        "meta",
    ),
    "a library tactic that runs code of the solution": (
        "add_aesop_rules",
        "RuleTac",
        "SingleRuleTac",
        "RuleTacDescr",
        "plausible",
        "slim_check",
    ),
    "solutions declare no notation and no instances": (
        "notation",
        "notation3",
        "infix",
        "infixl",
        "infixr",
        "prefix",
        "postfix",
        "instance",
        "deriving",
    ),
    "it changes the file's prelude": ("prelude",),
}
WORDS: dict[str, str] = {word: why for why, words in _WORDS.items() for word in words}
"""Refused identifier parts, each with the reason shown."""

ALLOWED_ATTRIBUTES = frozenset(
    {
        "simp",
        "reducible",
        "irreducible",
        "semireducible",
        "inline",
        "noinline",
        "specialize",
        "ext",
        "norm_cast",
        "push_cast",
        "elab_as_elim",
        "induction_eliminator",
        "cases_eliminator",
        "symm",
        "refl",
        "trans",
        "congr",
        "gcongr",
        "mono",
        "simps",
        "nolint",
        "deprecated",
        "grind",
    }
)
"""Attributes that only tag a declaration for existing, trusted automation."""

ALLOWED_OPTIONS = frozenset(
    {
        "maxHeartbeats",
        "maxRecDepth",
        "synthInstance.maxHeartbeats",
        "synthInstance.maxSize",
        "autoImplicit",
        "relaxedAutoImplicit",
        "exponentiation.threshold",
    }
)
ALLOWED_OPTION_PREFIXES = ("linter.", "pp.")
NEVER_IMPORTED = ("Lean", "Lake")
"""Module roots a solution never imports, whatever the header imports."""


def _first_part(token: Token) -> str:
    parts = token.parts[1:] if token.parts[:1] == ("_root_",) else token.parts
    return parts[0] if parts else ""


def _never_imported(module: str) -> bool:
    return module.split(".")[0] in NEVER_IMPORTED


def refusals(text: str, imports: Iterable[str] = ()) -> Shapes:
    """Every refused shape in ``text``; ``imports`` are the modules the trusted header imports
    (the only ones the solution may import too)."""
    try:
        toks = tokens(text)
    except LeanLexError as exc:
        return [f"source that cannot be read with certainty: {exc}"]
    shapes: Shapes = []
    seen: set[str] = set()  # a set beside the list: a file of many shapes is no quadratic scan

    def add(shape: str) -> None:
        if shape not in seen:
            seen.add(shape)
            shapes.append(shape)

    start = _imports(toks, frozenset(imports), add)
    groups = _Groups(_closers(toks, ("[", "("), ("]", ")")), _closers(toks, ("(",), (")",)))
    if toks[:1] and toks[0].kind == "ident" and toks[0].text == "module":
        add("a `module` header (the module system)")
    for i, tok in enumerate(toks):
        if tok.kind == "hash_command":
            add(f"the `{tok.text}` command")
        elif tok.kind == "backtick":
            add("a quotation or name literal (`)")
        elif tok.kind == "ident":
            _ident(toks, i, start, add, groups)
        elif tok.kind == "symbol" and tok.text == "@" and _adjacent(toks, i, "["):
            _attributes(toks, i + 2, add, groups)
    return shapes


def _adjacent(toks: Sequence[Token], i: int, text: str) -> bool:
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    return nxt is not None and nxt.text == text and nxt.offset == toks[i].offset + 1


def _imports(toks: Sequence[Token], allowed: frozenset[str], add: Callback) -> int:
    """Check the leading ``import`` lines; return the index of the first token after them."""
    i = 0
    while i < len(toks) and toks[i].kind == "ident" and toks[i].text == "import":
        name = toks[i + 1] if i + 1 < len(toks) else None
        if name is None or name.kind != "ident" or name.escaped:
            add("an import that does not name a plain module")
            return i + 1
        module = ".".join(name.parts)
        if _never_imported(module):
            add(f"the import `{module}` (a solution never imports Lean or Lake)")
        elif module not in allowed:
            shown = ", ".join(sorted(allowed)) or "none"
            add(f"the import `{module}` (allowed: the header's imports, {shown})")
        i += 2
    return i


@dataclass(frozen=True)
class _Groups:
    """Where each bracketed group ends, found once per scan (so that skipping a group costs
    nothing and no scan is quadratic, however many attribute lists or Aesop clauses nest or
    stay open): ``brackets`` pairs ``[``/``(`` with the ``]``/``)`` that closes it whatever its
    kind (as the attribute reading counts depth), ``parens`` pairs ``(`` with ``)`` only. An
    opener that is never closed is absent."""

    brackets: dict[int, int]
    parens: dict[int, int]


def _closers(
    toks: Sequence[Token], openers: Sequence[str], closers: Sequence[str]
) -> dict[int, int]:
    """The index of the token that closes each opener (by depth, the kinds not told apart)."""
    found: dict[int, int] = {}
    open_: list[int] = []
    for i, tok in enumerate(toks):
        if tok.kind != "symbol":
            continue
        if tok.text in openers:
            open_.append(i)
        elif tok.text in closers and open_:
            found[open_.pop()] = i
    return found


def _ident(toks: Sequence[Token], i: int, header_end: int, add: Callback, groups: _Groups) -> None:
    tok = toks[i]
    if tok.escaped:
        add("an escaped «name» (it can spell any name)")
    for part in tok.parts:
        why = WORDS.get(part)
        if why is not None:
            add(f"`{part}` ({why})")
    if _first_part(tok) in NEVER_IMPORTED:
        add(f"the `{_first_part(tok)}` namespace (metaprogramming)")
    if tok.text == "import" and i >= header_end:
        add("an `import` after the header")
    elif tok.text == "eval" and _adjacent(toks, i, "%"):
        add("`eval%` (metaprogramming: code that runs while the file is judged)")
    elif tok.text == "set_option":
        name = toks[i + 1] if i + 1 < len(toks) else None
        option = ".".join(name.parts) if name is not None and name.kind == "ident" else ""
        allowed = option in ALLOWED_OPTIONS or option.startswith(ALLOWED_OPTION_PREFIXES)
        if not allowed or (name is not None and name.escaped):
            add(f"the option `{option or '?'}` (only limits and linters may be set)")
    elif tok.text == "attribute" and i + 1 < len(toks) and toks[i + 1].text == "[":
        _attributes(toks, i + 2, add, groups)
    elif len(tok.parts) == 1 and tok.text.startswith("aesop"):
        _aesop_clauses(toks, i + 1, add, groups)
    elif tok.text == "add" and i > 0 and toks[i - 1].text == "(" and _rule_follows(toks, i + 1):
        add("an Aesop `(add ...)` rule (Aesop runs tactic rules of the solution as code)")


def _rule_follows(toks: Sequence[Token], i: int) -> bool:
    """Whether an Aesop rule's phase or priority follows (``safe``, ``norm``, ``unsafe``,
    ``50%``, a builder): tactics built on Aesop (``aesop_cat``, Mathlib's wrappers) forward
    these clauses under other names."""
    nxt = toks[i] if i < len(toks) else None
    if nxt is None:
        return False
    if nxt.kind == "ident" and nxt.text in ("safe", "norm", "unsafe", "tactic"):
        return True
    return nxt.kind == "number" and i + 1 < len(toks) and toks[i + 1].text == "%"


def _aesop_clauses(toks: Sequence[Token], i: int, add: Callback, groups: _Groups) -> None:
    """Refuse rule additions in the clauses after ``aesop`` (``aesop_cat``, ``aesop?``, ...).

    ``(add safe tactic evil)`` makes Aesop ``evalConst`` a declaration of the solution, so its
    code would run while the file is judged; any added rule is refused, the others
    (``(config := ...)``, ``(rule_sets := ...)``, ``(erase ...)``) only select trusted rules.
    """
    while i + 1 < len(toks) and toks[i].kind == "symbol" and toks[i].text == "(":
        if toks[i + 1].kind == "ident" and toks[i + 1].text == "add":
            add("an `aesop (add ...)` rule (Aesop runs tactic rules of the solution as code)")
        i = groups.parens.get(i, len(toks)) + 1  # past the clause's ")" (or the end)


def _attributes(toks: Sequence[Token], i: int, add: Callback, groups: _Groups) -> None:
    """Check one attribute list, from just after its ``[`` to the matching ``]``. A nested group
    is skipped whole (only the list's own entries are named); an entry that starts with one is
    refused, named by the group's closing bracket."""
    entry_start = True
    while i < len(toks):
        tok = toks[i]
        if tok.kind == "symbol" and tok.text in ("[", "("):
            if i not in groups.brackets:
                break  # never closed: neither is this list
            i = groups.brackets[i]
            if not entry_start:
                i += 1
                continue
            tok = toks[i]  # the group's closer, read as the entry's name below
        elif tok.kind == "symbol" and tok.text in ("]", ")"):
            return
        elif tok.kind == "symbol" and tok.text == ",":
            entry_start = True
            i += 1
            continue
        if entry_start:
            if tok.kind == "ident" and tok.text in ("local", "scoped"):
                i += 1
                continue
            if tok.kind == "symbol" and tok.text == "-":
                i += 1
                continue
            name = ".".join(tok.parts) if tok.kind == "ident" else tok.text
            if tok.kind != "ident" or tok.escaped or name not in ALLOWED_ATTRIBUTES:
                add(f"the attribute `{name}` (only tags for existing automation: simp, ext, ...)")
            entry_start = False
        i += 1
    add("an unterminated attribute list")
