"""Agda, Coq and Lean as batch judges: the files each judgment checks, its commands, its reading.

Statement fidelity: the author's trusted statement is restated in a wrapper file that imports the
solution qualified and checks ``goal : <statement>`` against ``Solution.name``; the solution can
redefine ``_+_``, notation or instances in its own module, but the wrapper elaborates the
statement in the author's context only, so a weakened or reinterpreted statement cannot pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.proofs import _scan
from assay.proofs._toolchain import AGDA_STDLIB, Toolchain

WRAPPER = "AssayGoal"
AGDA_MEANING = (
    "Agda type-checked every file under --safe with no unsolved metas or open holes: the term "
    "has exactly the stated type, and no postulate or unsafe option was used."
)
COQ_MEANING = (
    "coqc compiled the solution and a wrapper restating the trusted statement, and Print "
    "Assumptions found the proof closed under the global context (or using only allowed axioms)."
)
LEAN_MEANING = (
    "lean elaborated the solution and a wrapper restating the trusted statement with no errors, "
    "and #print axioms found only propext, Classical.choice, Quot.sound (or allowed) axioms."
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


def _indent(statement: str) -> str:
    return statement.strip().replace("\n", "\n    ")


# --- Agda ---------------------------------------------------------------------------------


def agda_module_name(source: str) -> str | None:
    match = re.search(r"(?m)^\s*module\s+([^\s(]+)", _scan.agda_code(source))
    return match.group(1) if match else None


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
    refusals = _scan.agda_refusals(solution, options)
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


# --- Coq ----------------------------------------------------------------------------------


def coq_plan(
    toolchain: Toolchain,
    solution: str,
    *,
    statement: str,
    name: str,
    header: str,
    module: str = "Solution",
) -> Plan:
    refusals = _scan.coq_refusals(solution)
    files = {
        f"{module}.v": solution.encode(),
        f"{WRAPPER}.v": (
            f"{header.strip()}\n"
            f"Require {module}.\n"
            f"Definition assay_goal : {_indent(statement)} := {module}.{name}.\n"
            f"Print Assumptions assay_goal.\n"
        ).encode(),
    }
    flags = ["-q", "-Q", ".", ""]
    steps = [[toolchain.binary, *flags, f"{module}.v"], [toolchain.binary, *flags, f"{WRAPPER}.v"]]
    return Plan(files, steps, flags, f"{WRAPPER}.v", COQ_MEANING, refusals)


def coq_assumptions(output: str) -> list[str] | None:
    """The axioms ``Print Assumptions`` lists; [] when closed; None when the output is unreadable."""
    if "Closed under the global context" in output:
        return []
    lines = output.splitlines()
    try:
        start = max(i for i, line in enumerate(lines) if line.strip() == "Axioms:")
    except ValueError:
        return None
    axioms: list[str] = []
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith((" ", "\t")):
            continue  # a multi-line type continues indented
        match = re.match(r"^(\S+) : ", line)
        if match is None:
            axioms.append(f"unreadable: {line.strip()}")  # e.g. "X is assumed to be guarded."
        else:
            axioms.append(match.group(1))
    return axioms


# --- Lean ---------------------------------------------------------------------------------


def lean_plan(
    toolchain: Toolchain,
    solution: str,
    *,
    statement: str,
    name: str,
    header: str,
    module: str = "Solution",
) -> Plan:
    refusals = _scan.lean_refusals(solution)
    files = {
        f"{module}.lean": solution.encode(),
        f"{WRAPPER}.lean": (
            f"import {module}\n{header.strip()}\n\n"
            f"theorem assay_goal : {_indent(statement)} := {name}\n\n"
            f"#print axioms assay_goal\n"
        ).encode(),
    }
    flags = ["env", "lean"]
    steps = [
        [toolchain.binary, "env", "lean", "-o", f"{module}.olean", f"{module}.lean"],
        [toolchain.binary, "env", "sh", "-c", f'LEAN_PATH=".:$LEAN_PATH" lean {WRAPPER}.lean'],
    ]
    return Plan(files, steps, flags, f"{WRAPPER}.lean", LEAN_MEANING, refusals)


def lean_assumptions(output: str) -> list[str] | None:
    """Axioms from the **last** ``#print axioms`` line; None when there is none."""
    found: list[str] | None = None
    for line in output.splitlines():
        if "does not depend on any axioms" in line:
            found = []
        match = re.search(r"depends on axioms: \[(.*)\]", line)
        if match:
            found = [a.strip() for a in match.group(1).split(",") if a.strip()]
    return found
