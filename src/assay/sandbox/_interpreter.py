"""The Python that runs inside the sandbox: the verifier's own, or another build of the same one.

A python check costs most of its CPU starting interpreters (the judge, in every run). A build of
the same CPython minor version that starts faster (Debian's ``/usr/bin/python3.11``: static,
PGO, about 30 % fewer instructions to start than a shared, non-PGO pyenv build) can run the
judge instead (``Config.sandbox_python``). It is used only if it is interchangeable with the
verifier's for everything the sandbox hands it, checked once per process by starting it:

- the same implementation, ``major.minor`` and bytecode magic number: the judge runs
  ``runner.pyc`` and helpers the verifier compiled (``_judge_files``);
- the same ABI flags and extension suffixes: checks import the verifier's site-packages,
  extension modules included (``python_paths``).

The stdlib the check sees is then that interpreter's own (a patch release apart from the
verifier's at most). Nothing about isolation depends on which build runs: the sandbox, the
seccomp filter, the uid and the judge's finder and audit hook are the same for both.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

from assay._errors import InvalidInput

FIELD = "sandbox_python"
_PROBE = (
    "import sys, _imp, _frozen_importlib_external as e\n"
    "print(repr((sys.implementation.name, tuple(sys.version_info[:2]), e.MAGIC_NUMBER, "
    "sys.abiflags, tuple(_imp.extension_suffixes()), sys.prefix, sys.base_prefix, "
    "sys.version.split()[0])))"
)
"""What must match, printed by the candidate interpreter (isolated, without site)."""


@dataclass(frozen=True)
class Interpreter:
    """An interpreter the sandbox may start: its real path and the prefixes it needs mounted."""

    path: str
    prefixes: tuple[str, ...]
    version: str


def verifier_interpreter() -> Interpreter:
    """The verifier's own interpreter (the default)."""
    return Interpreter(
        os.path.realpath(sys.executable),
        _outside_usr(sys.base_prefix, sys.prefix),
        sys.version.split()[0],
    )


@lru_cache(maxsize=4)
def sandbox_interpreter(path: str | None) -> Interpreter:
    """``path`` checked against the verifier's interpreter, or the verifier's own for None.

    Raises InvalidInput naming ``sandbox_python`` when it cannot start or differs in anything
    the judge relies on (see the module's docstring).
    """
    if not path:
        return verifier_interpreter()
    if not os.path.isabs(path):
        raise InvalidInput(f"{path!r} is not an absolute path", where=FIELD)
    real = os.path.realpath(path)
    try:
        probe = subprocess.run(
            [real, "-I", "-S", "-c", _PROBE],
            capture_output=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InvalidInput(f"cannot start {real}: {exc}", where=FIELD) from None
    try:
        facts = ast.literal_eval(probe.stdout.decode().strip())
        name, version, magic, abiflags, suffixes, prefix, base_prefix, full = facts
    except (ValueError, SyntaxError, TypeError, UnicodeDecodeError):
        raise InvalidInput(f"{real} is not a Python this verifier can use", where=FIELD) from None
    import _imp
    import importlib.util

    ours = (
        sys.implementation.name,
        tuple(sys.version_info[:2]),
        importlib.util.MAGIC_NUMBER,
        sys.abiflags,
        tuple(_imp.extension_suffixes()),
    )
    theirs = (name, version, magic, abiflags, suffixes)
    if theirs != ours:
        raise InvalidInput(
            f"{real} is {name} {full} ({abiflags or 'no'} ABI flags, bytecode "
            f"{magic!r}); the sandbox needs the verifier's {ours[0]} "
            f"{'.'.join(map(str, ours[1]))} with the same bytecode and extension ABI "
            f"({ours[2]!r}, {list(ours[4])})",
            where=FIELD,
        )
    return Interpreter(real, _outside_usr(base_prefix, prefix), full)


def _outside_usr(*prefixes: str) -> tuple[str, ...]:
    """The prefixes to mount besides /usr (which every run has)."""
    real = [os.path.realpath(p) for p in prefixes]
    return tuple(p for p in dict.fromkeys(real) if p != "/usr" and not p.startswith("/usr/"))
