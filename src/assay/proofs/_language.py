"""What a proof language is to assay: one small interface, one module per language.

The judge, the reading of a batch, the canary, the hole path and the kinds are generic: they
ask the language (``ProofLanguage``) for everything that differs, and never branch on its
name. A language is registered once, in ``_registry``; ``Language`` (the names) is checked
against that registry when the package loads.

Adding a language: write one module (``_agda.py``, ``_coq.py`` and ``_lean.py`` are the
examples; its lexer or audit helpers may be modules of their own) with a class that has every
member below, add it to ``_registry.LANGUAGES`` and its name to ``Language``, and add its
tests. The kind of the same name (``assay.checks``) is made from the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from assay._config import DEFAULT_CONFIG, Config
from assay.proofs._plan import Plan
from assay.proofs._toolchain import Toolchain
from assay.sandbox import RunResult


class ProofLanguage(Protocol):
    """One proof checker as a batch judge."""

    name: str
    """The kind's name and ``Verdict.language``."""
    install_hint: str
    """What to install when the toolchain is missing (named in the inconclusive outcome)."""
    statement_required: bool
    """Every judgment needs the trusted statement and name (else only whole-file ones do)."""
    parenthesize: bool
    """A hole candidate goes into the hole in parentheses (it is read as one term)."""
    sandbox_paths: tuple[str, ...]
    """Host paths the toolchain needs to see beyond /usr (e.g. a file under /etc), shown
    read-only at the same path in every run of its plans (those that exist on this machine)."""
    statement_step: int | None
    """The step that compiles only the author's statement and header, if any: a failure there
    is never the work's."""
    kind_doc: str
    """The kind's documentation (``assay kinds``, docs/kinds.md)."""

    def toolchain(self, config: Config) -> Toolchain | None:
        """This machine's toolchain for ``config`` (looked up once), or None when missing."""
        ...

    def refusals(
        self,
        source: str,
        header: str = "",
        options: Sequence[str] = (),
        config: Config = DEFAULT_CONFIG,
        obligation: bool = False,
    ) -> list[str]:
        """The refused shapes in a whole ``source`` file, found without any toolchain (``config``:
        where the libraries it may import live). ``obligation``: the file is the author's, a
        hole candidate filled in (a language may refuse less there than in a solution)."""
        ...

    def candidate_refusals(self, candidate: str) -> list[str]:
        """The refused shapes of a hole candidate on its own (before it is filled in)."""
        ...

    def holes(self, text: str) -> list[tuple[int, int]]:
        """The spans of the holes in an obligation (raises HoleNotFound when it cannot tell)."""
        ...

    def hole_at(self, text: str, line: int, column: int) -> tuple[int, int]:
        """The span of the hole opening at the 1-based ``line``:``column``, else HoleNotFound."""
        ...

    def terms_problem(self, name: str | None, header: str) -> str | None:
        """Why an author's ``name`` or ``header`` cannot be used (a spec error), or None."""
        ...

    def plan(
        self,
        toolchain: Toolchain,
        solution: str,
        *,
        statement: str | None,
        name: str | None,
        header: str,
        options: Sequence[str],
        stdlib: bool,
    ) -> Plan:
        """The files and steps that judge ``solution`` (against ``statement`` when given)."""
        ...

    def canary(self, toolchain: Toolchain) -> Plan:
        """A known-good proof's plan, which every working toolchain accepts."""
        ...

    def tampering(self, runs: Sequence[RunResult]) -> str | None:
        """Which file assay wrote changed before a trusted step read it (a finding), or None."""
        ...

    def trusted_failure(self, runs: Sequence[RunResult]) -> str | None:
        """Why the last run failed on the trusted side (never a finding), or None."""
        ...

    def does_not_check(self, exit_code: int | None) -> bool:
        """Whether the last step's exit code is the toolchain's "this does not check"."""
        ...

    def audit(
        self, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
    ) -> tuple[bool, list[str]]:
        """(green, assumptions) of a run that checked; anything unreadable withholds green."""
        ...

    def remaining_holes(self, output: str) -> int | None:
        """The open holes when *every* complaint is one, else None (only withholds success)."""
        ...

    def shown(self, line: str) -> bool:
        """Whether a line of the toolchain's output belongs in the verdict's diagnostics."""
        ...
