"""The proof languages assay judges: registered once, here.

``Language`` is the one definition of their names (``Verdict.language``, the kinds, every
signature); it is checked against ``LANGUAGES`` when the package loads, so the two cannot
drift apart.
"""

from __future__ import annotations

from typing import Literal, get_args

from assay._errors import InvalidInput
from assay.proofs._agda import AGDA
from assay.proofs._coq import COQ
from assay.proofs._language import ProofLanguage
from assay.proofs._lean import LEAN

Language = Literal["agda", "coq", "lean"]
"""The name of a registered proof language (one of ``LANGUAGES``)."""

LANGUAGES: dict[str, ProofLanguage] = {language.name: language for language in (AGDA, COQ, LEAN)}
"""Every proof language, by name (each a ``Language``), in the order the kinds are listed."""

if set(get_args(Language)) != set(LANGUAGES):  # pragma: no cover  (caught by any import)
    raise RuntimeError(f"Language {get_args(Language)} is not the registry's {sorted(LANGUAGES)}")


def proof_language(name: str) -> ProofLanguage:
    """The registered language called ``name``; InvalidInput for any other name."""
    try:
        return LANGUAGES[name]
    except KeyError:
        raise InvalidInput(f"no proof language {name!r}; known: {', '.join(LANGUAGES)}") from None
