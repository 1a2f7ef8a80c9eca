"""Reading Coq's two audit channels exactly: coqchk's context summary and ``Print Assumptions``.

Both are read from steps no code of the solution runs in; anything not exactly in the expected
form is unreadable (None), which withholds green.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


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
