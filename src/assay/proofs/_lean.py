"""Lean as a batch judge: four ``lean`` processes and a separate kernel-replaying audit.

Everything Lean-specific is here: finding the toolchain (and a Lake project, from ``Config``),
the refusal scan (``_lean_scan``, by tokens: ``_lean_lex``), the plan (the solution compiled
alone, the statement without it, the wrapper, the audit: ``_lean_audit``), the reading of its
steps (exit 1 or the audit's "rejected" is "does not check"; exit 3 is a trusted step's failure)
and the axiom audit (only propext, Classical.choice and Quot.sound, or allowed ones).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from assay._config import DEFAULT_CONFIG, Config
from assay._errors import ToolchainMissing
from assay.proofs import _lean_scan
from assay.proofs._batch import WORKDIR, Alone, compiled_suffixes
from assay.proofs._holes import marker_at, marker_holes
from assay.proofs._language import ProofLanguage
from assay.proofs._lean_audit import (
    AUDIT_MODULE,
    AUDIT_SOURCE,
    GOAL_NAME,
    REJECTED_EXIT,
    SOLUTION_MODULE,
    STATEMENT_MODULE,
    STATEMENT_NAME,
    AuditExpectation,
    new_marker,
    read_audit,
)
from assay.proofs._lean_lex import LeanLexError, header_imports
from assay.proofs._lean_lex import tokens as lean_tokens
from assay.proofs._paths import source_grammar
from assay.proofs._plan import MARKER_PLACEHOLDER, WRAPPER, Plan, indent
from assay.proofs._toolchain import Toolchain, first_line, tree_identity, under
from assay.sandbox import RunResult

LEAN_MEANING = (
    "lean compiled the solution on its own, the trusted statement in a module that never sees "
    "it, and a wrapper that checks the solution's proof against that statement by conversion; "
    "then a separate audit process that runs none of the solution's code sent every declaration "
    "of the three modules to Lean's kernel again and found the proof depends only on propext, "
    "Classical.choice, Quot.sound (or allowed) axioms."
)
LEAN_STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
LEAN_PROJECT_VARIABLE = "ASSAY_LEAN_PROJECT"
"""Where ``Config.from_env`` reads ``Config.lean_project``: a Lake project folder (its
``lean-toolchain``, ``lake-manifest.json`` and built packages, e.g. Mathlib) whose toolchain and
libraries Lean judgments use; unset: the default toolchain, core only."""
DOES_NOT_CHECK = 1
KIND_DOC = """Lean compiles the solution alone, the statement without it, and a wrapper; a separate
    audit process re-checks every declaration with the kernel and lists the axioms.

    The solution is compiled in a folder of its own, as code that may run (library tactics can
    run its declarations): only its compiled ``.olean`` is copied out. The statement is
    elaborated in its own module (the ``header`` and ``def AssayStatement.statement : Prop :=
    (statement)``) that never imports the solution; the wrapper checks ``@_root_.<name>``
    against it by conversion. The audit (a trusted program run with ``lean --run`` in a process
    that never imports the solution, and imports only the header's modules) refuses any other
    import before importing, replays every declaration of the three modules through the kernel
    (so ``debug.skipKernelTC`` cannot help), checks the wrapper states exactly the statement at
    all its universe levels, and prints the axioms as marked, escaped lines; green needs only
    propext, Classical.choice and Quot.sound (or ``allowed_axioms``). Refused first, by tokens:
    ``sorry``, ``axiom``, ``native_decide`` and ``decide +native``, ``unsafe``, every
    metaprogramming command (``run_cmd``, ``elab``, ``macro``, ...), Aesop rule additions,
    instances and notation, attributes beyond simp-like tags, options beyond limits and
    linters, ``#`` commands, «escaped» names, imports other than the header's (never ``Lean``),
    and source whose tokens Lean could read differently. Runs where ``lake`` is on PATH
    (``ASSAY_LEAN_PROJECT`` names a Lake project for Mathlib); elsewhere it is inconclusive,
    saying so.
    """
"""The ``lean`` kind's documentation (``assay kinds``, docs/kinds.md)."""


def _lean_atom(part: str) -> bool:
    """A Lean name part without «» escapes: a letter or ``_``, then letters, digits, ``_'!?``."""
    first, rest = part[:1], part[1:]
    return (first.isalpha() or first == "_") and all(c.isalnum() or c in "_'!?" for c in rest)


source_grammar(".lean", "a Lean name part", _lean_atom)
compiled_suffixes(".olean", ".ilean")


@lru_cache(maxsize=4)
def lean(project: str | None) -> Toolchain | None:
    """Lean where ``lake`` is on PATH (in the Lake ``project``, ``Config.lean_project``, when
    one is set); None elsewhere. See :func:`lean_in`."""
    if shutil.which("lake") is None:
        return None
    return lean_in(Path(project) if project else None)


def lean_in(project: Path | None) -> Toolchain | None:
    """The Lean toolchain and libraries that apply in ``project`` (None: an empty folder).

    Everything is asked *in that folder*, where its ``lean-toolchain`` applies (elan picks the
    toolchain by folder): the installation prefix (``lean --print-prefix``), so judgments call
    that ``lean`` directly and never ``lake`` (which would read a lakefile the solution could
    write); its version; and the library path (``lake env printenv LEAN_PATH``). The library's
    identity digests the toolchain file, the Lake manifest and every ``.olean`` on that path
    (name, size, mtime), so rebuilding or updating a library changes every cache key.
    """
    with tempfile.TemporaryDirectory(prefix="assay-lean-") as empty:
        folder = project if project is not None else Path(empty)
        lean_command = shutil.which("lean") or str(
            Path(shutil.which("lake") or "lake").parent / "lean"
        )
        prefix = first_line([lean_command, "--print-prefix"], folder)
        if prefix is None or not Path(prefix).is_dir():
            return None
        binary = str(Path(prefix) / "bin" / "lean")
        version = first_line([binary, "--version"], folder) or "unknown"
        own = str(Path(prefix) / "lib" / "lean")
        found = first_line(["lake", "env", "printenv", "LEAN_PATH"], folder) if project else None
    if project is not None and found is None:
        return None  # a project whose library path cannot be read judges nothing
    search = [entry for entry in (found or "").split(os.pathsep) if entry]
    search = [*dict.fromkeys([*search, own])]
    digest = hashlib.sha256(f"{prefix}\n{version}\n".encode())
    for name in ("lean-toolchain", "lake-manifest.json"):
        path = (project or Path("/nonexistent")) / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-"))
    for entry in search:
        digest.update(tree_identity(Path(entry), "*.olean").encode() + b"\n")
    mounts = tuple(path for path in dict.fromkeys([prefix, *search]) if not under(path, "/usr"))
    return Toolchain(
        "lean",
        binary,
        version,
        f"{project or 'core'}@{digest.hexdigest()[:16]}",
        search_path=tuple(search),
        mounts=mounts,
    )


LEAN_STEP_STATEMENT = 1
"""Index in ``lean_plan``'s steps of the trusted statement's own compilation."""
LEAN_OLEAN_BYTES = 256 * 1024 * 1024
"""The largest compiled solution copied out of its own folder (a compiled module of a proof is
far smaller; a larger one is treated as not compiled)."""
LEAN_TRUSTED_FAILED = 3
"""Exit code of a trusted step that failed (its file changed, or the statement or the audit
does not compile): never a finding about the solution."""


def lean_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the solution's theorem in the wrapper, or None."""
    try:
        found = lean_tokens(name)
    except LeanLexError as exc:
        return f"the name {name[:80]!r} is not a Lean name ({exc})"
    if len(found) != 1 or found[0].kind != "ident" or found[0].escaped:
        return f"the name {name[:80]!r} is not a plain Lean name (dotted parts, no «»)"
    return None


def lean_plan(
    toolchain: Toolchain,
    solution: str,
    *,
    statement: str,
    name: str,
    header: str,
    module: str = SOLUTION_MODULE,
) -> Plan:
    """Four steps in the sandbox, each a fresh process; only the first elaborates the solution.

    1. ``AssaySolution.lean``, on the library path only (it cannot import anything of ours), in
       a scratch folder of its own holding nothing else (``Plan.alone``): elaboration runs
       tactics, and library tactics can run the solution's own declarations (Aesop's
       ``tactic`` rules, for one), so assay assumes code of the solution runs here. Trusted code
       then copies out only ``AssaySolution.olean`` (a regular file, no link, size-capped) into
       the folder the later steps see; nothing else it wrote survives;
    2. ``AssayStatement.lean``: the header and ``def AssayStatement.statement : Prop :=
       (<statement>)``, never importing the solution, so no instance, notation, coercion or
       option of the solution can change how the statement reads (``2 + 3 = 6`` means
       ``Nat.add``, whatever ``HAdd`` instance the solution declares);
    3. ``AssayGoal.lean``: imports the two and states ``theorem assay_goal :
       AssayStatement.statement := @_root_.<name>`` (accepted only if the types are convertible);
    4. the statement module rebuilt (step 3 imported the solution's compiled module, whose code
       could have rewritten files), then the audit (``_lean_audit``): a separate process that
       imports none of the three (only the header's modules, given on its command line, and
       ``Init``; any other import a module lists is refused before anything is imported)
       replays all their declarations through the kernel and prints the axioms ``assay_goal``
       depends on.

    Steps 2 to 4 first check that their source still has the bytes assay staged (step 3 runs
    any initialization code the solution's compiled module carries, in the shared folder) and
    rebuild their output; if one fails it exits 3, which is never a finding. Every step calls
    the resolved ``lean`` binary directly, with the library path set explicitly: no ``lake``
    runs in the folder the solution could write.
    """
    problems: list[str] = []
    try:
        imports = tuple(header_imports(header))
    except LeanLexError as exc:
        imports = ()
        problems.append(f"the trusted header cannot be read ({exc})")
    missing = [module for module in imports if not _resolves(module, toolchain.search_path)]
    if missing:
        raise ToolchainMissing(
            f"the Lean library ({', '.join(toolchain.search_path)}) has no compiled "
            f"{', '.join(missing)}, which the header imports; set {LEAN_PROJECT_VARIABLE} to a "
            "built Lake project that has it"
        )
    refusals = _lean_scan.refusals(solution, imports) + problems
    if module != SOLUTION_MODULE:
        refusals.append(
            f"the module name {module[:80]!r} (a Lean solution is always staged as "
            f"{SOLUTION_MODULE}, whatever it is called)"
        )
    name_problem = lean_name_problem(name)
    if name_problem is not None:
        refusals.append(name_problem)
    target = name if name.startswith("_root_.") else f"_root_.{name}"
    files = {
        f"{SOLUTION_MODULE}.lean": solution.encode(),
        f"{STATEMENT_MODULE}.lean": (
            f"{header.strip()}\n\n"
            f"def _root_.{STATEMENT_MODULE}.{STATEMENT_NAME} : Prop :=\n"
            f"  ({indent(statement)}\n  )\n"
        ).encode(),
        f"{WRAPPER}.lean": (
            f"import {STATEMENT_MODULE}\nimport {SOLUTION_MODULE}\n\n"
            f"theorem {GOAL_NAME} : {STATEMENT_MODULE}.{STATEMENT_NAME} := @{target}\n"
        ).encode(),
        f"{AUDIT_MODULE}.lean": AUDIT_SOURCE.encode(),
    }
    library = ":".join(toolchain.search_path)
    lean = toolchain.binary
    steps = [
        ["env", f"LEAN_PATH={library}", lean, "-o", *_module_files(SOLUTION_MODULE)],
        _trusted(files, STATEMENT_MODULE, library, lean, exec_last=False),
        _trusted(files, WRAPPER, f"{library}:{WORKDIR}", lean, exec_last=True),
        _audit_step(files, library, lean, imports),
    ]
    marker = new_marker()
    return Plan(
        files,
        steps,
        [f"LEAN_PATH={library}"],
        f"{WRAPPER}.lean",
        LEAN_MEANING,
        refusals,
        mounts=toolchain.mounts,
        marker=marker,
        expects=AuditExpectation(marker, imports),
        alone=Alone((f"{SOLUTION_MODULE}.lean",), f"{SOLUTION_MODULE}.olean", LEAN_OLEAN_BYTES),
    )


def _resolves(module: str, search_path: Sequence[str]) -> bool:
    """Whether ``module`` has a compiled ``.olean`` in one of the library folders."""
    relative = Path(*module.split(".")).with_suffix(".olean")
    return any((Path(entry) / relative).is_file() for entry in search_path)


def _module_files(module: str) -> list[str]:
    return [f"{module}.olean", f"{module}.lean"]


def _unchanged(files: dict[str, bytes], module: str) -> str:
    """Shell: exit 3 unless ``module``'s source still has the bytes assay staged."""
    digest = hashlib.sha256(files[f"{module}.lean"]).hexdigest()
    line = shlex.quote(f"{digest}  {module}.lean")
    return f"echo {line} | sha256sum -c --status - || exit {LEAN_TRUSTED_FAILED}"


def _trusted(
    files: dict[str, bytes], module: str, library: str, lean: str, *, exec_last: bool
) -> list[str]:
    """Compile one trusted module afresh: its source checked, its old output removed first.

    ``exec_last``: the compiler's own exit (1: does not check) is the step's; otherwise any
    failure is the trusted side's (exit 3).
    """
    compile_ = shlex.join(["env", f"LEAN_PATH={library}", lean, "-o", *_module_files(module)])
    last = f"exec {compile_}" if exec_last else f"{compile_} || exit {LEAN_TRUSTED_FAILED}"
    script = "\n".join(
        [
            _unchanged(files, module),
            f"rm -f {module}.olean {module}.ilean || exit {LEAN_TRUSTED_FAILED}",
            last,
        ]
    )
    return ["sh", "-c", script]


def _audit_step(
    files: dict[str, bytes], library: str, lean: str, imports: Sequence[str]
) -> list[str]:
    """Rebuild the statement module, then run the audit with the header's ``imports`` (the only
    library modules it may import); its "rejected" exit becomes 1 (does not check), its other
    failures 3, and a signal that ended it ends the step the same way.

    The rebuild is what makes the statement the audit reads trustworthy whatever ran before:
    step 3 imports the solution's compiled module, and a forged one could carry code that runs
    on import and rewrites files. Nothing in this step imports the solution, so the statement
    is the one compiled here from the checked source, and every other declaration (the wrapper's
    ``assay_goal`` included) must pass the kernel against it."""
    run = shlex.join(
        [
            "env",
            f"LEAN_PATH={library}",
            lean,
            "--run",
            f"{AUDIT_MODULE}.lean",
            MARKER_PLACEHOLDER,
            *imports,
        ]
    )
    statement = shlex.join(
        ["env", f"LEAN_PATH={library}", lean, "-o", *_module_files(STATEMENT_MODULE)]
    )
    script = "\n".join(
        [
            _unchanged(files, AUDIT_MODULE),
            _unchanged(files, STATEMENT_MODULE),
            f"rm -f {STATEMENT_MODULE}.olean {STATEMENT_MODULE}.ilean || exit {LEAN_TRUSTED_FAILED}",
            f"{statement} || exit {LEAN_TRUSTED_FAILED}",
            # again after the compile: a link planted in step 3 where it writes its output could
            # lead that write into a trusted source
            _unchanged(files, AUDIT_MODULE),
            _unchanged(files, STATEMENT_MODULE),
            run,
            "status=$?",
            'if [ "$status" -eq 0 ]; then exit 0; fi',
            f'if [ "$status" -eq {REJECTED_EXIT} ]; then exit 1; fi',
            'if [ "$status" -gt 128 ]; then kill -s "$(kill -l "$status")" "$$"; fi',
            'if [ "$status" -gt 128 ]; then exit "$status"; fi',
            f"exit {LEAN_TRUSTED_FAILED}",
        ]
    )
    return ["sh", "-c", script]


def lean_assumptions(output: str, plan: Plan) -> list[str] | None:
    """The axioms the audit step reports, plus any import it found outside the header; None
    when its output is not exactly what the audit prints (``_lean_audit.read_audit``)."""
    if not isinstance(plan.expects, AuditExpectation):
        return None
    reading = read_audit(output, plan.expects)
    if reading is None:
        return None
    return reading.axioms + reading.problems


def lean_audit(
    plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
) -> tuple[bool, list[str]]:
    """The Lean audit step's report (``_lean_audit``), read exactly; the standard three allowed."""
    expected = plan.expects if isinstance(plan.expects, AuditExpectation) else None
    read = None if expected is None else read_audit(runs[-1].output, expected)
    if read is None:
        return False, ["the assumption audit printed nothing readable"]
    allowed = set(allowed_axioms) | set(LEAN_STANDARD_AXIOMS)
    green = not read.problems and all(axiom in allowed for axiom in read.axioms)
    return green, read.axioms + read.problems


class Lean:
    """Lean behind ``ProofLanguage``: see the module's docstring."""

    name = "lean"
    install_hint = "lake"
    statement_required = True
    parenthesize = False
    sandbox_paths: tuple[str, ...] = ()
    statement_step: int | None = LEAN_STEP_STATEMENT
    kind_doc = KIND_DOC

    def toolchain(self, config: Config) -> Toolchain | None:
        """lean, in ``config.lean_project`` when one is set."""
        return lean(config.lean_project)

    def refusals(
        self,
        source: str,
        header: str = "",
        options: Sequence[str] = (),
        config: Config = DEFAULT_CONFIG,
        obligation: bool = False,
    ) -> list[str]:
        """The Lean shapes refused in a whole file; only the ``header``'s imports are allowed."""
        try:
            imports = header_imports(header)
        except LeanLexError as exc:
            return [f"the trusted header cannot be read ({exc})"]
        return _lean_scan.refusals(source, imports)

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
        """The name must be a plain Lean name and the header must read as Lean."""
        problem = None if name is None else lean_name_problem(name)
        if problem is not None:
            return f"'name': {problem}"
        try:
            header_imports(header)
        except LeanLexError as exc:
            return f"'header' cannot be read as Lean: {exc}"
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
        """``lean_plan``; Lean needs the trusted statement and the name."""
        if statement is None or name is None:
            raise ValueError("lean judgments need the trusted statement and the name to check")
        return lean_plan(toolchain, solution, statement=statement, name=name, header=header)

    def canary(self, toolchain: Toolchain) -> Plan:
        """A proof of ``1 + 1 = 2`` through the real plan."""
        solution = "theorem canary : 1 + 1 = 2 := rfl\n"
        return lean_plan(toolchain, solution, statement="1 + 1 = 2", name="canary", header="")

    def tampering(self, runs: Sequence[RunResult]) -> str | None:
        """Each trusted step checks its own sources (exit 3: ``trusted_failure``)."""
        return None

    def trusted_failure(self, runs: Sequence[RunResult]) -> str | None:
        """A trusted step exited 3 (its file changed, or the statement or the audit does not
        compile): never a finding about the solution. The first step is the solution's own
        compilation, whose code may run: its exit 3 is no trusted step's (read as a crash)."""
        if len(runs) > 1 and runs[-1].exit_code == LEAN_TRUSTED_FAILED:
            return f"step {len(runs)}, a trusted step, failed (exit {LEAN_TRUSTED_FAILED})"
        return None

    def does_not_check(self, exit_code: int | None) -> bool:
        """lean exits 1 on a proof that does not check; the audit's "rejected" exit too."""
        return exit_code in (DOES_NOT_CHECK, REJECTED_EXIT)

    def audit(
        self, plan: Plan, runs: Sequence[RunResult], allowed_axioms: Sequence[str]
    ) -> tuple[bool, list[str]]:
        """See ``lean_audit``."""
        return lean_audit(plan, runs, allowed_axioms)

    def remaining_holes(self, output: str) -> int | None:
        """Lean's holes are not counted: a run that fails is a failure."""
        return None

    def shown(self, line: str) -> bool:
        """Every line is a diagnostic."""
        return True


LEAN: ProofLanguage = Lean()
