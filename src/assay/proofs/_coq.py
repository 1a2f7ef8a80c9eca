"""Coq as a batch judge: ``coqc`` in five steps, audited by ``coqchk`` and ``Print Assumptions``.

Everything Coq-specific is here: finding the toolchain, the refusal scan (``_coq_scan``), the
plan, the reading of its steps (the exit code that means "does not check", a trusted file that
changed, a statement that does not compile on its own) and the assumption audit
(``_coq_audit``). Statement fidelity: a required library's global instances, coercions, hints
and options reach the requiring file, so the statement is compiled on its own, before the
solution exists as a library.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from assay._config import DEFAULT_CONFIG, Config
from assay.proofs._batch import compiled_suffixes
from assay.proofs._coq_audit import coq_assumptions, coqchk_summary
from assay.proofs._coq_scan import coq_refusals
from assay.proofs._holes import marker_at, marker_holes
from assay.proofs._language import ProofLanguage
from assay.proofs._paths import module_problem, source_grammar
from assay.proofs._plan import AUDIT, STATEMENT, TRUSTED_STEMS, WRAPPER, Plan, indent
from assay.proofs._toolchain import Toolchain, existing, tree_identity, version_of
from assay.sandbox import RunResult

COQ_MEANING = (
    "coqc compiled the trusted statement alone, then the solution and a wrapper that checks the "
    "solution's term against it by conversion; coqchk re-checked all three with Coq's independent "
    "kernel checker and found no axiom of the solution, unsafe fixpoint, assumed positivity or "
    "type-in-type; and Print Assumptions found the proof closed (or using only allowed axioms)."
)
SANDBOX_PATHS = ("/etc/ocamlfind.conf", "/etc/ocamlfind.conf.d")
"""coqc (OCaml) refuses to start without its findlib configuration: shown read-only."""
DOES_NOT_CHECK = 1
KIND_DOC = """coqc compiles the statement alone, then the proof and a wrapper; coqchk and Print
    Assumptions audit the result.

    The statement (with ``header``) is compiled before the solution exists, so none of the
    solution's instances, coercions, notations, hints or options can change what it means; the
    wrapper checks ``Solution.<name>`` against it by conversion. coqc exits 0 on ``Admitted``,
    ``Hypothesis`` and ``Unset Guard Checking``, so exit 0 is not enough: green also needs
    coqchk (Coq's independent kernel checker, over the compiled files) to find no axiom of the
    solution, unsafe fixpoint, assumed positivity or type-in-type, and ``Print Assumptions``, in
    a step that only loads the compiled wrapper, to list nothing beyond ``allowed_axioms``.
    A toolchain crash the solution provokes (an anomaly) refutes when a known-good proof still
    checks; a limit (time, or memory/stack confirmed by a larger run that checks) is
    inconclusive unless ``limits_are_rules``. ``Admitted``, ``admit``, axioms, disabled
    checking, plugins and file-writing commands are refused before judging.
    """
"""The ``coq`` kind's documentation (``assay kinds``, docs/kinds.md)."""


def _coq_ident(part: str) -> bool:
    """A Coq identifier: a letter or ``_``, then letters, digits, ``_`` and ``'``."""
    first, rest = part[:1], part[1:]
    return (first.isalpha() or first == "_") and all(c.isalnum() or c in "_'" for c in rest)


source_grammar(".v", "a Coq identifier", _coq_ident)
compiled_suffixes(".vo", ".vos", ".vok", ".glob")


@lru_cache(maxsize=1)
def coq() -> Toolchain | None:
    """coqc and coqchk where both are on PATH; None elsewhere (no green without coqchk)."""
    binary = shutil.which("coqc")
    if binary is None:
        return None
    where = version_of([binary, "-where"])
    library = tree_identity(Path(where) / "theories", "*.vo") if where != "unknown" else "unknown"
    checker = shutil.which("coqchk")
    if checker is None:
        return None  # without the independent checker no Coq verdict can be green
    version = version_of([binary, "--version"]) + " / " + version_of([checker, "--version"])
    return Toolchain("coq", os.path.realpath(binary), version, library, os.path.realpath(checker))


COQ_STATEMENT = STATEMENT
COQ_AUDIT = AUDIT
COQ_TRUSTED = TRUSTED_STEMS
COQ_SOLUTION = "Solution"
COQ_STEP_STATEMENT, COQ_STEP_CHECKER, COQ_STEP_AUDIT = 0, 3, 4
"""Indices in ``coq_plan``'s steps: the statement alone, coqchk, then Print Assumptions."""
COQ_STEP_TRUSTED = 2
"""The first step after the solution's compilation: from here on, each step first checks the
files assay wrote (``_coq_guarded``)."""
TRUSTED_FILE_CHANGED = 86
"""Exit code of a step that found a file assay staged changed before it ran (the sources are
known byte for byte); no toolchain exits with it. Only the solution's compilation ran in that
folder in between, so it is a finding about the work."""
COQ_DIGEST = re.compile(rf"[0-9a-f]{{64}}  {COQ_STATEMENT}\.vo")
"""``sha256sum``'s line for the compiled statement: the last line of step 1, the first line
of every step after the solution's (read by ``tampering``)."""


def coq_plan(
    toolchain: Toolchain,
    solution: str,
    *,
    statement: str,
    name: str,
    header: str,
    module: str = COQ_SOLUTION,
) -> Plan:
    """Five steps, each reading what the earlier ones compiled:

    1. ``AssayStatement.v`` (the trusted header and statement, nothing of the solution loaded)
       fixes the statement's elaborated term before the solution exists as a library, so no
       instance, coercion, notation, hint, scope or option of the solution can change it;
    2. the solution; 3. the wrapper, ``assay_goal : AssayStatement.assay_statement :=
       Solution.name`` (accepted only if the two types are convertible);
    4. ``coqchk`` re-checks the three libraries with Coq's independent kernel checker and lists
       every axiom, unsafe fixpoint, assumed positivity and type-in-type in the environment;
    5. ``Print Assumptions assay_goal`` in a file that only requires the wrapper, so
       nothing of the solution is *used* there and it cannot print into that output.
    """
    refusals = coq_refusals(solution)
    problem = module_problem(module, ".v")
    if problem is None and "." in module:
        problem = f"the module name {module[:120]!r} (a Coq solution is one top-level library)"
    if problem is not None:
        refusals.append(problem)
    if module in COQ_TRUSTED:
        refusals.append(f"the reserved module name {module}")
    files = {
        f"{COQ_STATEMENT}.v": (
            f"{header.strip()}\nDefinition assay_statement := ({_coq_statement(statement)}).\n"
        ).encode(),
        f"{module}.v": solution.encode(),
        f"{WRAPPER}.v": (
            f"Require {COQ_STATEMENT}.\n"
            f"Require {module}.\n"
            f"Definition assay_goal : {COQ_STATEMENT}.assay_statement := {module}.{name}.\n"
        ).encode(),
        f"{COQ_AUDIT}.v": f"Require {WRAPPER}.\nPrint Assumptions {WRAPPER}.assay_goal.\n".encode(),
    }
    flags = ["-q", "-Q", ".", ""]
    checker = [toolchain.checker or "coqchk", "-silent", "-o", "-Q", ".", ""]
    for library in (COQ_STATEMENT, module, WRAPPER):
        checker += ["-norec", library]
    statement_step = shlex.join([toolchain.binary, *flags, f"{COQ_STATEMENT}.v"])
    steps = [
        ["sh", "-c", f"{statement_step} || exit\nexec sha256sum {COQ_STATEMENT}.vo"],
        [toolchain.binary, *flags, f"{module}.v"],
        _coq_guarded(files, [toolchain.binary, *flags, f"{WRAPPER}.v"]),
        _coq_guarded(files, checker),
        _coq_guarded(files, [toolchain.binary, *flags, f"{COQ_AUDIT}.v"]),
    ]
    mounts = existing(SANDBOX_PATHS)
    return Plan(files, steps, flags, f"{WRAPPER}.v", COQ_MEANING, refusals, mounts)


def _coq_guarded(files: dict[str, bytes], command: list[str]) -> list[str]:
    """A trusted step that first checks the files assay wrote, because the solution's
    compilation ran in the same writable folder before it: the three trusted sources must be
    plain files with the bytes staged (else exit ``TRUSTED_FILE_CHANGED``), and the compiled
    statement's digest is printed first, for the reader to compare with the one step 1 printed
    right after compiling it. Then the step's own command, by ``exec`` (its exit and signal are
    the step's)."""
    lines = [f"{hashlib.sha256(files[f'{name}.v']).hexdigest()}  {name}.v" for name in COQ_TRUSTED]
    names = shlex.join([f"{name}.v" for name in COQ_TRUSTED] + [f"{COQ_STATEMENT}.vo"])
    script = "\n".join(
        [
            # plain files only: a link or a pipe in their place could stall the digest
            f'for f in {names}; do [ -f "$f" ] && [ ! -L "$f" ] || exit {TRUSTED_FILE_CHANGED}; done',
            f"printf '%s\\n' {shlex.join(lines)} | sha256sum -c --status - "
            f"|| exit {TRUSTED_FILE_CHANGED}",
            f"sha256sum {COQ_STATEMENT}.vo || exit {TRUSTED_FILE_CHANGED}",
            f"exec {shlex.join(command)}",
        ]
    )
    return ["sh", "-c", script]


def _coq_statement(statement: str) -> str:
    """The statement as one term: a final sentence-ending ``.`` would end the definition."""
    text = indent(statement)
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def tampering(runs: Sequence[RunResult]) -> str | None:
    """Which file assay wrote changed before a trusted step read it, or None.

    Each step after the solution's compilation checks the trusted sources in the sandbox
    (exit ``TRUSTED_FILE_CHANGED``) and prints the compiled statement's digest first, which
    must be the one step 1 printed right after compiling it."""
    if len(runs) <= COQ_STEP_TRUSTED:
        return None
    if runs[-1].exit_code == TRUSTED_FILE_CHANGED:
        return f"a trusted source, found before step {len(runs)}"
    compiled = [line for line in runs[COQ_STEP_STATEMENT].output.splitlines() if line.strip()]
    expected = compiled[-1] if compiled else ""
    for index in range(COQ_STEP_TRUSTED, len(runs)):
        first = runs[index].output.split("\n", 1)[0]
        if not COQ_DIGEST.fullmatch(expected) or first != expected:
            return f"{COQ_STATEMENT}.vo, found before step {index + 1}"
    return None


def without_digest(output: str) -> str:
    """A trusted Coq step's output without the digest line it printed first."""
    first, _, rest = output.partition("\n")
    return rest if COQ_DIGEST.fullmatch(first) else output


def coq_audit(
    plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
) -> tuple[bool, list[str]]:
    """Green needs both channels clean: coqchk's summary of the environment it re-checked (no
    axiom of the solution, no unsafe fixpoint, assumed positivity or type-in-type) and the
    closure ``Print Assumptions`` lists (only allowed axioms)."""
    if len(runs) <= max(COQ_STEP_CHECKER, COQ_STEP_AUDIT):
        return False, ["the Coq audit steps did not run"]
    summary = coqchk_summary(without_digest(runs[COQ_STEP_CHECKER].output))
    read = coq_assumptions(without_digest(runs[COQ_STEP_AUDIT].output))
    problems: list[str] = []
    if summary is None:
        problems.append("coqchk's summary was not readable")
    else:
        untrusted = [n.removesuffix(".v") for n in plan.files if n != f"{COQ_STATEMENT}.v"]
        problems += summary.problems(allowed_axioms, untrusted)
    if read is None:
        problems.append("the assumption audit printed nothing readable")
        read = []
    assumptions = read + [problem for problem in problems if problem not in read]
    return not problems and all(axiom in allowed_axioms for axiom in read), assumptions


class Coq:
    """Coq behind ``ProofLanguage``: see the module's docstring."""

    name = "coq"
    install_hint = "coqc or coqchk"
    statement_required = True
    parenthesize = False
    sandbox_paths: tuple[str, ...] = SANDBOX_PATHS
    statement_step: int | None = COQ_STEP_STATEMENT
    kind_doc = KIND_DOC

    def toolchain(self, config: Config) -> Toolchain | None:
        """coqc and coqchk (no setting in ``config`` applies)."""
        return coq()

    def refusals(
        self,
        source: str,
        header: str = "",
        options: Sequence[str] = (),
        config: Config = DEFAULT_CONFIG,
        obligation: bool = False,
    ) -> list[str]:
        """The Coq shapes refused in a whole file (``_coq_scan``)."""
        return coq_refusals(source)

    def candidate_refusals(self, candidate: str) -> list[str]:
        """Nothing beyond the whole file's scan: the filled file is scanned as a whole."""
        return []

    def holes(self, text: str) -> list[tuple[int, int]]:
        """The ``{! !}`` markers, as plain text."""
        return marker_holes(text)

    def hole_at(self, text: str, line: int, column: int) -> tuple[int, int]:
        """The ``{! !}`` marker opening at ``line``:``column``."""
        return marker_at(text, line, column)

    def terms_problem(self, name: str | None, header: str) -> str | None:
        """Any plain name and header are accepted here (the plan refuses what it cannot use)."""
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
        """``coq_plan``; Coq needs the trusted statement and the name."""
        if statement is None or name is None:
            raise ValueError("coq judgments need the trusted statement and the name to check")
        return coq_plan(toolchain, solution, statement=statement, name=name, header=header)

    def canary(self, toolchain: Toolchain) -> Plan:
        """A proof of ``1 + 1 = 2`` through the real plan."""
        solution = "Theorem canary : 1 + 1 = 2.\nProof. reflexivity. Qed.\n"
        return coq_plan(toolchain, solution, statement="1 + 1 = 2", name="canary", header="")

    def tampering(self, runs: Sequence[RunResult]) -> str | None:
        """See ``tampering``."""
        return tampering(runs)

    def trusted_failure(self, runs: Sequence[RunResult]) -> str | None:
        """The statement's own compilation (step 1) failed: the author's, never the work's."""
        if len(runs) - 1 == COQ_STEP_STATEMENT:
            return "the trusted statement (with the header) does not compile on its own"
        return None

    def does_not_check(self, exit_code: int | None) -> bool:
        """coqc exits 1 on a proof that does not check."""
        return exit_code == DOES_NOT_CHECK

    def audit(
        self, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
    ) -> tuple[bool, list[str]]:
        """See ``coq_audit``."""
        return coq_audit(plan, runs, allowed_axioms)

    def remaining_holes(self, output: str) -> int | None:
        """Coq has no holes to count: a run that fails is a failure."""
        return None

    def shown(self, line: str) -> bool:
        """The digest lines the trusted steps print are no diagnostics."""
        return not COQ_DIGEST.fullmatch(line)


COQ: ProofLanguage = Coq()
