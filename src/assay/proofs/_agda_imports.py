"""Which modules an Agda solution may import: an allow-list, because ``--safe`` has holes.

Agda 2.6.2.2 checks ``--safe`` coinfectively for library modules (a ``--safe`` file cannot
import a module that was not checked with ``--safe``), but not for its *primitive* modules: a
``--safe`` file without ``--cubical`` may import ``Agda.Primitive.Cubical``, and its ``primHComp``
under a ``with`` proves ``⊥`` (adversarial review adv-agda). A deny-list would close that one
hole; an allow-list also closes the next one of its kind before it is found. A solution may import
only:

- the modules the trusted ``header`` imports (the author chose them);
- agda-stdlib modules whose own OPTIONS say ``--safe`` and do not use sized types, cubical or
  rewriting (Agda re-checks their imports under ``--safe``; agda-stdlib 1.7.1 never imports
  ``Agda.Primitive.Cubical``);
- Agda's builtin modules that are checked with ``--safe`` and export no escape hatch, and
  ``Agda.Primitive`` (levels): never ``Agda.Primitive.Cubical``, ``Agda.Builtin.Cubical.*``,
  ``TrustMe``, ``Size``, ``Equality.Rewrite``, ``Equality.Erase`` or ``Reflection.External``.

Anything else is refused by name before judging. The cubical primitives' names are refused too
(a second guard, in case a module re-exporting them were ever allowed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from assay._config import DEFAULT_CONFIG
from assay.proofs._agda_lex import AgdaLexError, Token, tokens
from assay.proofs._paths import module_problem

SAFE_BUILTINS = frozenset(
    {"Agda.Primitive"}
    | {
        f"Agda.Builtin.{name}"
        for name in (
            "Bool", "Char", "Char.Properties", "Coinduction", "Equality", "Float",
            "Float.Properties", "FromNat", "FromNeg", "FromString", "IO", "Int", "List", "Maybe",
            "Nat", "Reflection", "Reflection.Properties", "Sigma", "Strict", "String",
            "String.Properties", "Unit", "Word", "Word.Properties",
        )
    }
)  # fmt: skip
"""Agda 2.6.2.2's builtin modules checked with ``--safe`` (their own OPTIONS say so) that
export no way around it, plus ``Agda.Primitive`` (universe levels)."""

CUBICAL_PRIMITIVES = frozenset(
    {
        "primHComp", "primComp", "primTransp", "primGlue", "prim^glue", "prim^unglue",
        "primFaceForall", "primINeg", "primIMin", "primIMax", "primDepIMin", "primIdFace",
        "primIdPath", "primIdElim", "primPOr", "primSubOut",
    }
)  # fmt: skip
"""The names ``Agda.Primitive.Cubical`` and ``Agda.Builtin.Cubical.*`` bind the cubical
primitives to; no ``--safe`` proof outside cubical Agda has a use for them."""

_UNSAFE_LIBRARY_OPTIONS = frozenset(
    {"--sized-types", "--cubical", "--erased-cubical", "--rewriting", "--type-in-type"}
)
_OPTIONS = re.compile(r"\{-#\s*OPTIONS\s(.*?)#-\}", re.DOTALL)
_ALLOWED = (
    "a solution may import only the header's modules, agda-stdlib's --safe modules and "
    "Agda's safe builtin modules"
)


@lru_cache(maxsize=4096)
def safe_stdlib_module(name: str, library: Path = Path(DEFAULT_CONFIG.agda_stdlib)) -> bool:
    """``name`` is an agda-stdlib module whose own OPTIONS say ``--safe`` and use nothing unsafe.

    The library is trusted text, read here only for its OPTIONS pragmas; Agda itself re-checks
    every import under ``--safe``, so this only decides which modules may be named at all."""
    if module_problem(name, ".agda") is not None:
        return False
    path = library.joinpath(*name.split(".")).with_suffix(".agda")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    flags = {flag for match in _OPTIONS.finditer(text) for flag in match.group(1).split()}
    return "--safe" in flags and not flags & _UNSAFE_LIBRARY_OPTIONS


def imported(found: list[Token]) -> list[str | None]:
    """The module named after each ``import`` keyword (None when no name follows it)."""
    code = [token for token in found if token.kind not in ("comment", "pragma")]
    names: list[str | None] = []
    for index, token in enumerate(code):
        if token.kind == "word" and token.text == "import":
            following = code[index + 1] if index + 1 < len(code) else None
            names.append(
                following.text if following is not None and following.kind == "word" else None
            )
    return names


def header_modules(header: str) -> frozenset[str]:
    """The modules the trusted header imports (none when it does not read as Agda)."""
    try:
        return frozenset(name for name in imported(tokens(header)) if name is not None)
    except AgdaLexError:
        return frozenset()


def import_refusals(
    found: list[Token], trusted: Iterable[str] = (), library: str = DEFAULT_CONFIG.agda_stdlib
) -> list[str]:
    """Each import outside the allow-list, named; each cubical primitive's name. ``library``:
    the agda-stdlib whose ``--safe`` modules are allowed (``Config.agda_stdlib``)."""
    allowed = SAFE_BUILTINS | set(trusted)
    shapes: list[str] = []
    for name in imported(found):
        if name is None:
            shapes.append("an `import` without a module name")
        elif name not in allowed and not safe_stdlib_module(name, Path(library)):
            shapes.append(f"the import of {name[:120]!r} ({_ALLOWED})")
    parts = {part for token in found for part in token.parts}
    shapes += [f"the cubical primitive `{name}`" for name in sorted(CUBICAL_PRIMITIVES & parts)]
    return shapes
