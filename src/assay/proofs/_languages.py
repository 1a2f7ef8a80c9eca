"""Agda, Coq and Lean as batch judges: the files each judgment checks, its commands, its reading.

Statement fidelity: the author's trusted statement is restated in a wrapper file that imports the
solution qualified and checks ``goal : <statement>`` against ``Solution.name``; the solution can
redefine ``_+_``, notation or instances in its own module, but the wrapper elaborates the
statement in the author's context only, so a weakened or reinterpreted statement cannot pass.
Coq goes further, because a required library's global instances, coercions, hints and
options reach the requiring file: the statement is compiled on its own, before the solution.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay._errors import ToolchainMissing
from assay.proofs import _scan
from assay.proofs._agda_lex import AgdaLexError, module_header, tokens
from assay.proofs._judge import WORKDIR, Alone
from assay.proofs._lean_audit import (
    AUDIT_MODULE,
    AUDIT_SOURCE,
    GOAL_NAME,
    MARKER_PLACEHOLDER,
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
from assay.proofs._paths import module_problem, path_problem
from assay.proofs._toolchain import AGDA_STDLIB, LEAN_PROJECT_VARIABLE, Toolchain

WRAPPER = "AssayGoal"
AGDA_MEANING = (
    "Agda type-checked every file under --safe with no unsolved metas or open holes: the term "
    "has exactly the stated type, and no postulate or unsafe option was used."
)
COQ_MEANING = (
    "coqc compiled the trusted statement alone, then the solution and a wrapper that checks the "
    "solution's term against it by conversion; coqchk re-checked all three with Coq's independent "
    "kernel checker and found no axiom of the solution, unsafe fixpoint, assumed positivity or "
    "type-in-type; and Print Assumptions found the proof closed (or using only allowed axioms)."
)
LEAN_MEANING = (
    "lean compiled the solution on its own, the trusted statement in a module that never sees "
    "it, and a wrapper that checks the solution's proof against that statement by conversion; "
    "then a separate audit process that runs none of the solution's code sent every declaration "
    "of the three modules to Lean's kernel again and found the proof depends only on propext, "
    "Classical.choice, Quot.sound (or allowed) axioms."
)
LEAN_STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")


@dataclass(frozen=True)
class Plan:
    """What one judgment checks and how: the files, the command steps, the flags."""

    files: dict[str, bytes]
    steps: list[list[str]]
    flags: list[str]
    target: str
    meaning: str
    refusals: list[str] = field(default_factory=list)
    mounts: tuple[str, ...] = ()
    """Host folders the steps read, shown read-only at the same path (a toolchain outside /usr)."""
    marker: str = ""
    """Drawn fresh for each plan and put in place of ``{marker}`` only in the commands that run
    (``commands``): it is not in ``steps``, so not in the cache key, and no earlier step saw it."""
    lean_audit: AuditExpectation | None = None
    """Lean: what the audit step must report (its marker, the header's imports)."""
    alone: Alone | None = None
    """The first step runs in a folder of its own, only its one output copied out (Lean: the
    solution's compilation runs its code; see ``_judge.Alone``)."""

    def commands(self) -> list[list[str]]:
        """The steps as they run: ``{marker}`` replaced by this plan's marker."""
        if not self.marker:
            return [list(step) for step in self.steps]
        return [
            [arg.replace(MARKER_PLACEHOLDER, self.marker) for arg in step] for step in self.steps
        ]

    def __post_init__(self) -> None:
        """A file name that is not a plain relative source name refuses the plan, whoever built it."""
        for name in self.files:
            problem = path_problem(name)
            if problem is not None and problem not in self.refusals:
                self.refusals.append(problem)


def _indent(statement: str) -> str:
    return statement.strip().replace("\n", "\n    ")


# --- Agda ---------------------------------------------------------------------------------


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
    module = agda_module_name(solution) or "Solution"
    refusals = _scan.agda_refusals(solution, options, header)
    if module == WRAPPER:
        refusals.append(f"the reserved module name {WRAPPER}")
    files = {module.replace(".", "/") + ".agda": solution.encode()}
    target = next(iter(files))
    if statement is not None and name is not None:
        files[f"{WRAPPER}.agda"] = (
            f"module {WRAPPER} where\n\n{header.strip()}\n"
            f"import {module} as AssaySolution\n\n"
            f"assay-goal : {_indent(statement)}\n"
            f"assay-goal = AssaySolution.{name}\n"
        ).encode()
        target = f"{WRAPPER}.agda"
    flags = ["--safe", "--no-libraries", "-i", "."]
    if stdlib:
        flags += ["-i", str(AGDA_STDLIB)]
    return Plan(files, [[toolchain.binary, *flags, target]], flags, target, AGDA_MEANING, refusals)


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


# --- Coq ---------------------------------------------------------------------------------

COQ_STATEMENT = "AssayStatement"
COQ_AUDIT = "AssayAudit"
COQ_TRUSTED = (COQ_STATEMENT, WRAPPER, COQ_AUDIT)
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
of every step after the solution's (read by ``_reading.coq_tampering``)."""


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
    refusals = _scan.coq_refusals(solution)
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
    return Plan(files, steps, flags, f"{WRAPPER}.v", COQ_MEANING, refusals)


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
    text = _indent(statement)
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def coq_assumptions(output: str) -> list[str] | None:
    """The axioms ``Print Assumptions`` lists; [] when closed; None when the output is unreadable.

    Read from a run whose only commands are ``Require AssayGoal`` and ``Print Assumptions``, so
    its whole output must be the answer: exactly "Closed under the global context", or "Axioms:"
    and the entries. Any other line (a warning, a message) makes it unreadable.
    """
    lines = [line for line in output.splitlines() if line.strip()]
    if lines == ["Closed under the global context"]:
        return []
    if not lines or lines[0] != "Axioms:" or len(lines) == 1:
        return None
    axioms: list[str] = []
    for line in lines[1:]:
        if line.startswith((" ", "\t")):
            continue  # a multi-line type continues indented
        match = re.match(r"^(\S+) : ", line)
        if match is None:
            axioms.append(f"unreadable: {line.strip()}")  # e.g. "X is assumed to be guarded."
        else:
            axioms.append(match.group(1))
    return axioms


COQCHK_SECTIONS = (
    "Axioms",
    "Constants/Inductives relying on type-in-type",
    "Constants/Inductives relying on unsafe (co)fixpoints",
    "Inductives whose positivity is assumed",
)


@dataclass(frozen=True)
class CheckerSummary:
    """coqchk's context summary: each section's entries (fully qualified names)."""

    predicative: bool
    sections: dict[str, list[str]]

    def problems(self, allowed_axioms: Sequence[str], untrusted: Sequence[str]) -> list[str]:
        """What withholds green: impredicative Set, any type-in-type, unsafe fixpoint or assumed
        positivity, and any axiom declared in an ``untrusted`` library (the solution's, and
        those compiled after it), used or not, unless
        ``allowed_axioms`` names it fully qualified. Axioms of installed libraries and of the
        trusted header are judged by the closure, from Print Assumptions: coqchk lists the whole
        environment, and the fields of sealed library modules among its "axioms"."""
        found = [] if self.predicative else ["Set is impredicative"]
        for section, names in self.sections.items():
            if section != "Axioms":
                found += [f"{name} ({section.lower()})" for name in names]
        found += [
            f"{name} (an axiom of the solution)"
            for name in self.sections["Axioms"]
            if name.split(".")[0] in untrusted and name not in allowed_axioms
        ]
        return found


def coqchk_summary(output: str) -> CheckerSummary | None:
    """coqchk ``-silent -o`` output read exactly: every line accounted for, else None."""
    lines = [line.rstrip() for line in output.splitlines()]
    lines = [line for line in lines if line]
    if len(lines) < 3 or lines[:2] != ["CONTEXT SUMMARY", "==============="]:
        return None
    theory = lines[2]
    if theory not in ("* Theory: Set is predicative", "* Theory: Set is impredicative"):
        return None
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[3:]:
        header = re.fullmatch(r"\* (.+?):( <none>)?", line)
        if header is not None and header.group(1) in COQCHK_SECTIONS:
            if header.group(1) in sections:
                return None
            current = sections[header.group(1)] = []
            if header.group(2) is not None:
                current = None  # "<none>": no entries may follow
            continue
        entry = re.fullmatch(r"    ([^\s:]+)", line)
        if entry is None or current is None:
            return None
        current.append(entry.group(1))
    if set(sections) != set(COQCHK_SECTIONS):
        return None
    return CheckerSummary(theory.endswith(" predicative"), sections)


# --- Lean ---------------------------------------------------------------------------------

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
    refusals = _scan.lean_refusals(solution, imports) + problems
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
            f"  ({_indent(statement)}\n  )\n"
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
        lean_audit=AuditExpectation(marker, imports),
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
    if plan.lean_audit is None:
        return None
    reading = read_audit(output, plan.lean_audit)
    if reading is None:
        return None
    return reading.axioms + reading.problems
