"""Agda as a batch judge: one ``agda --safe`` process over the solution and a wrapper.

Everything Agda-specific is here: finding the toolchain (and agda-stdlib, from ``Config``), the
refusal scan (``_agda_scan``, on Agda's own tokens: ``_agda_lex``; imports: ``_agda_imports``),
the plan, the exit code that means "does not check" (42), the reading of open holes, and the
hole syntax (``{! !}`` and ``?`` among Agda's tokens; a candidate goes in parenthesized).
Statement fidelity: the author's trusted statement is restated in a wrapper that imports the
solution qualified and checks ``assay-goal : <statement>`` against ``Solution.name``; the
solution can redefine ``_+_``, notation or instances in its own module, but the wrapper
elaborates the statement in the author's context only. Agda has no axiom to audit: ``--safe``
refuses postulates and unsafe options.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from assay._config import DEFAULT_CONFIG, Config
from assay.proofs._agda_lex import (
    AgdaLexError,
    Token,
    is_name_part,
    module_header,
    normalise,
    tokens,
)
from assay.proofs._agda_scan import agda_candidate_refusals, agda_refusals
from assay.proofs._agda_toolchain import agda_toolchain, for_sources, needs_fallback
from assay.proofs._batch import WORKDIR, compiled_suffixes
from assay.proofs._holes import HoleNotFound
from assay.proofs._language import ProofLanguage
from assay.proofs._paths import module_problem, source_grammar
from assay.proofs._plan import WRAPPER, Plan, indent
from assay.proofs._toolchain import Toolchain
from assay.sandbox import RunResult

AGDA_MEANING = (
    "Agda type-checked every file under --safe with no unsolved metas or open holes: the term "
    "has exactly the stated type, and no postulate or unsafe option was used."
)
DOES_NOT_CHECK = 42
_UNWRITABLE = re.compile(r"^Failed to write interface (/\S+\.agdai)\.$")
_LOCATED = re.compile(r"^(/\S+\.agda):\d+,\d+")
_CHECKING = re.compile(r"^\s*Checking \S+ \((/\S+\.agda)\)\.\s*$")
_CANARY_HEADER = "open import Agda.Builtin.Nat\nopen import Agda.Builtin.Equality"
KIND_DOC = """Agda type-checks the proof under ``--safe`` (exit 0), against the trusted statement.

    The file is read with Agda 2.6.2.2's own lexical rules. Refused before judging: ``postulate``
    (also in ``let``), ``primTrustMe`` and ``primEraseEquality``, every pragma but OPTIONS,
    OPTIONS flags beyond ``options`` (the unsafe ones and ``--cubical`` never), text Agda cannot
    lex, a module name that is not a plain name, and every import outside an allow-list: the
    ``header``'s modules, agda-stdlib's ``--safe`` modules (no sized types) and Agda's safe
    builtins; never ``Agda.Primitive.Cubical`` (Agda 2.6.2.2 lets a ``--safe`` file import it,
    and its ``primHComp`` under a ``with`` proves ``⊥``), ``Agda.Builtin.Cubical.*``,
    ``TrustMe``, ``Size``, ``Equality.Rewrite``/``Erase`` or ``Reflection.External``; the
    cubical primitives' names are refused too. A whole-file solution declares no data or
    record type, has no ``module`` but its header, applies no module to arguments (``open M
    a``) and runs no reflection of its own (``unquoteDecl``, ``macro``): both Agdas accept
    proofs of ``⊥`` through them (agda/agda#8564, agda/agda#8696; ``1 + 1 ≡ 3`` was verified);
    the header and a hole obligation, the author's, may. Which
    Agda judges (``Config.agda_toolchain``; under ``auto`` the PyPI 2.6.4.3, or Debian's
    2.6.2.2 for a ``header`` importing a module the PyPI copy lacks) is the author's choice:
    a solution importing such a module is refused. A hole candidate must be one term (no
    declaration, comment, pragma or line break). A proof file over ``max_file_bytes`` refutes.
    Exit 42 (a type error, an open hole, a ``--safe`` violation) refutes; a toolchain crash
    refutes when a known-good proof still checks (else ``error``); a limit is inconclusive
    unless ``limits_are_rules``.
    """
"""The ``agda`` kind's documentation (``assay kinds``, docs/kinds.md)."""


source_grammar(".agda", "an Agda module name part", is_name_part)
compiled_suffixes(".agdai")


def agda_module_name(source: str) -> str | None:
    """The module name a solution is staged under: the same reading the scan checked.

    None when there is no header (Agda then names the module after its file) and when the
    header's name is refused (the scan reports why, so the plan never runs).
    """
    try:
        header = module_header(tokens(source))
    except AgdaLexError:
        return None
    if header.name is None or module_problem(header.name, ".agda") is not None:
        return None
    return header.name


def agda_plan(
    toolchain: Toolchain,
    solution: str,
    *,
    statement: str | None,
    name: str | None,
    header: str,
    options: Sequence[str],
    stdlib: bool,
) -> Plan:
    """One step: Agda under ``--safe`` on the wrapper (``assay-goal : <statement>`` defined as the
    solution's ``name``, the solution imported qualified), or on the solution itself when there
    is no statement (a hole obligation). ``stdlib``: the toolchain's library folders on the
    include path. The Agda that runs is ``toolchain`` or, when a file of the plan imports a
    module its library lacks, its ``fallback`` (``for_sources``); while ``toolchain`` itself
    runs, the plan carries the same files under its ``fallback`` (the judge's safety net)."""
    module = agda_module_name(solution) or "Solution"
    files = {module.replace(".", "/") + ".agda": solution.encode()}
    if statement is not None and name is not None:
        files[f"{WRAPPER}.agda"] = _wrapper(module, statement, name, header)
    # Only the author's inputs choose the Agda (the header and statement; a hole obligation's
    # file, into which a candidate can put no import): were the work's own imports to choose,
    # a candidate could pick whichever Agda its proof needs (they disagree on some builtins).
    author = [header, statement] if statement is not None and name is not None else [solution]
    chosen = for_sources(toolchain, author)
    library = chosen.search_path[0] if chosen.search_path else DEFAULT_CONFIG.agda_stdlib
    obligation = statement is None or name is None  # the author's file, filled by a hole
    refusals = agda_refusals(solution, options, header, library, obligation=obligation)
    if chosen.fallback is not None and needs_fallback(chosen, [solution]):
        refusals.append(
            "an import the judging Agda's library has no interface for (a module that does not "
            "check under Agda 2.6.4.3, or imports one): the author can import it in the header, "
            "which makes Debian's Agda judge"
        )
    toolchain = chosen
    if module == WRAPPER:
        refusals.append(f"the reserved module name {WRAPPER}")
    target = f"{WRAPPER}.agda" if f"{WRAPPER}.agda" in files else next(iter(files))
    flags = ["--safe", "--no-libraries", "-i", "."]
    if stdlib:
        for folder in toolchain.search_path:
            flags += ["-i", folder]
    steps = [[*toolchain.command, *flags, target]]
    fallback = None
    if toolchain.fallback is not None:
        fallback = agda_plan(
            toolchain.fallback,
            solution,
            statement=statement,
            name=name,
            header=header,
            options=options,
            stdlib=stdlib,
        )
    return Plan(
        files,
        steps,
        flags,
        target,
        AGDA_MEANING,
        refusals,
        toolchain.mounts,
        toolchain=toolchain,
        fallback=fallback,
    )


def _wrapper(module: str, statement: str, name: str, header: str) -> bytes:
    """The wrapper that restates the trusted ``statement`` against the solution's ``name``."""
    return (
        f"module {WRAPPER} where\n\n{header.strip()}\n"
        f"import {module} as AssaySolution\n\n"
        f"assay-goal : {indent(statement)}\n"
        f"assay-goal = AssaySolution.{name}\n"
    ).encode()


def library_failure(output: str) -> str | None:
    """The library file a batch Agda run failed on, when the failure is the toolchain's own, not
    the work's; else None. Read so that no text of the candidate's can make it: the first line
    Agda printed after its ``Checking M (path).`` lines must be a failure to write the interface
    of, or an error located in (one without an interface: a module this Agda rejects), exactly
    the module Agda was checking last, and that module must be outside the judged folder. Agda
    stops at its first error and starts it with its location, so a failure in a file of the plan
    starts with a ``/proof/`` location (or follows a ``Checking`` line of one), whatever the
    message quotes after it."""
    last: str | None = None
    for line in output.splitlines():
        if not line.strip():
            continue
        checking = _CHECKING.match(line)
        if checking:
            last = checking.group(1)
            continue
        if last is None or last.startswith(WORKDIR + "/"):
            return None
        unwritable = _UNWRITABLE.match(line)
        if unwritable and unwritable.group(1) == last.removesuffix(".agda") + ".agdai":
            return last
        located = _LOCATED.match(line)
        if located and located.group(1) == last and not Path(last).with_suffix(".agdai").exists():
            return last
        return None
    return None


def agda_remaining_holes(output: str) -> int | None:
    """The open holes when *every* complaint is about open holes; None when anything else is.

    This reading can only withhold success: unknown text means "something else went wrong".
    """
    lines = [
        line
        for line in output.splitlines()
        if line.strip() and not re.match(r"^\s*Checking \S+ \(.*\)\.\s*$", line)
    ]
    if not lines or lines[0].strip() != "Unsolved interaction metas at the following locations:":
        return None
    locations = lines[1:]
    if not locations or not all(
        re.match(r"^\s+\S.*:\d+,\d+-(\d+,)?\d+\s*$", line) for line in locations
    ):
        return None
    return len(locations)


def _offset(text: str, line: int, column: int) -> int:
    """The offset in ``text`` of Agda's ``line``:``column`` (counted after Agda's line-ending
    conversion, as Agda reports positions)."""
    normal, origin = normalise(text)
    lines = normal.split("\n")
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        raise HoleNotFound(f"line {line}, column {column} is outside the file")
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
    return offset if origin is None else origin[offset]


def _agda_tokens(text: str) -> list[Token]:
    try:
        return tokens(text)
    except AgdaLexError as exc:
        raise HoleNotFound(f"the file does not read as Agda: {exc}") from None


def hole_span(text: str, line: int, column: int) -> tuple[int, int]:
    """The (start, end) of the hole (``{! !}``, nested ones included, or ``?``) that opens at
    ``line``:``column``, found among Agda's own tokens (never inside a comment or a string)."""
    start = _offset(text, line, column)
    for token in _agda_tokens(text):
        if token.start == start and (token.kind == "hole" or token.text == "?"):
            return token.start, token.end
    raise HoleNotFound(f"no hole ({{! !}} or ?) opens at line {line}, column {column}")


def agda_holes(text: str) -> list[tuple[int, int]]:
    """The ``{! !}`` holes among Agda's tokens: a ``{!`` in a comment or a string is not a hole,
    and nested holes are one."""
    return [(t.start, t.end) for t in _agda_tokens(text) if t.kind == "hole"]


class Agda:
    """Agda behind ``ProofLanguage``: see the module's docstring."""

    name = "agda"
    install_hint = "agda"
    statement_required = False
    parenthesize = True
    sandbox_paths: tuple[str, ...] = ()
    statement_step: int | None = None
    kind_doc = KIND_DOC

    def toolchain(self, config: Config) -> Toolchain | None:
        """The Agda ``config.agda_toolchain`` selects, with its own library (``_agda_toolchain``)."""
        return agda_toolchain(config)

    def refusals(
        self,
        source: str,
        header: str = "",
        options: Sequence[str] = (),
        config: Config = DEFAULT_CONFIG,
        obligation: bool = False,
    ) -> list[str]:
        """The Agda shapes refused in a whole file (``_agda_scan.agda_refusals``), its imports
        read against the selected toolchain's library (the same sources in every toolchain)."""
        found = agda_toolchain(config)
        library = found.search_path[0] if found and found.search_path else config.agda_stdlib
        return agda_refusals(source, options, header, library, obligation=obligation)

    def candidate_refusals(self, candidate: str) -> list[str]:
        """A hole candidate must be one term (``_agda_scan.agda_candidate_refusals``)."""
        return agda_candidate_refusals(candidate)

    def holes(self, text: str) -> list[tuple[int, int]]:
        """See ``agda_holes``."""
        return agda_holes(text)

    def hole_at(self, text: str, line: int, column: int) -> tuple[int, int]:
        """See ``hole_span``."""
        return hole_span(text, line, column)

    def terms_problem(self, name: str | None, header: str) -> str | None:
        """Any name and header are accepted here (the scan refuses what it cannot use)."""
        return None

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
        """See ``agda_plan``."""
        return agda_plan(
            toolchain,
            solution,
            statement=statement,
            name=name,
            header=header,
            options=options,
            stdlib=stdlib,
        )

    def canary(self, toolchain: Toolchain) -> Plan:
        """A proof of ``1 + 1 ≡ 2`` with Agda's builtins only, through the real plan."""
        solution = (
            f"module Solution where\n\n{_CANARY_HEADER}\n\ncanary : 1 + 1 ≡ 2\ncanary = refl\n"
        )
        return agda_plan(
            toolchain,
            solution,
            statement="1 + 1 ≡ 2",
            name="canary",
            header=_CANARY_HEADER,
            options=(),
            stdlib=False,
        )

    def tampering(self, runs: Sequence[RunResult]) -> str | None:
        """One step, nothing to tamper with between steps."""
        return None

    def trusted_failure(self, runs: Sequence[RunResult]) -> str | None:
        """A library module Agda could not load (``library_failure``): its interface could not
        be written (the library is read-only in the sandbox) or it does not check under this
        Agda (agda-stdlib 1.7.1 has modules Agda 2.6.4 rejects; ``scripts/agda-toolchain`` lists
        them in ``.SKIPPED``). The toolchain's library is incomplete: never a finding about the
        work. Under "auto" the judge then lets the plan's ``fallback`` (Debian's Agda) judge."""
        failed = library_failure(runs[-1].output) if runs else None
        if failed is None:
            return None
        if Path(failed).with_suffix(".agdai").exists():
            return f"the toolchain's library has no writable interface for {failed}"
        return (
            f"the toolchain's library has no built interface for {failed} (it does not check "
            "under this Agda, or scripts/agda-toolchain has not built it)"
        )

    def does_not_check(self, exit_code: int | None) -> bool:
        """Agda exits 42 on a type error, an open hole or a ``--safe`` violation."""
        return exit_code == DOES_NOT_CHECK

    def audit(
        self, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
    ) -> tuple[bool, list[str]]:
        """Nothing to audit: ``--safe`` already refused every postulate."""
        return True, []

    def remaining_holes(self, output: str) -> int | None:
        """See ``agda_remaining_holes``."""
        return agda_remaining_holes(output)

    def shown(self, line: str) -> bool:
        """Every line is a diagnostic."""
        return True


AGDA: ProofLanguage = Agda()
