"""The one exception tree of assay.

::

    AssayError                  anything assay raises on purpose
    ├── InvalidInput            the caller's input is wrong: a task file, a key file, an argument
    │   └── InvalidSpec         a check spec its kind refuses (missing, empty or unknown field)
    ├── SandboxUnavailable      isolation cannot be had (no bwrap), or a command cannot start
    └── ToolchainMissing        a proof checker (agda, coqc, lake) is not installed here

The rule that keeps errors and outcomes apart: a problem with the *work being checked* is an
`Outcome` (usually ``refuted``); a problem with the *caller's input or assay's machinery* is
raised, and at the boundary becomes exit code 2 / HTTP 4xx, or status ``error``.

Context travels as keyword arguments so a boundary can report it without parsing the message.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every exception assay raises on purpose."""


class InvalidInput(AssayError):
    """The caller gave assay something it cannot use; the message names the field or line."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InvalidSpec(InvalidInput):
    """A check spec that its kind refuses, so the check is never built, never run, never passed."""

    def __init__(self, message: str, *, kind: str | None = None, where: str | None = None) -> None:
        self.kind = kind
        super().__init__(message, where=where)


class SandboxUnavailable(AssayError):
    """Untrusted code cannot run here as asked: never silently downgraded to no isolation."""


class ToolchainMissing(AssayError):
    """A proof toolchain is not installed; kinds report inconclusive, commands exit 3."""


EXIT_CODES: dict[type[AssayError], int] = {
    InvalidInput: 2,
    SandboxUnavailable: 3,
    ToolchainMissing: 3,
    AssayError: 1,
}
"""Exit code per error class, most specific first; the CLI and the API read this one table."""


def exit_code(exc: AssayError) -> int:
    for cls, code in EXIT_CODES.items():
        if isinstance(exc, cls):
            return code
    return 1
