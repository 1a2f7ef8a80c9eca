"""Reading a tool's arguments: exact keys, strict JSON types, and files only under the root.

A tool's arguments come from a model, so every rule is checked here, before any work: an
unknown key is refused (never ignored: a typo must not silently change what is judged), a
``true`` is not the integer 1, and a file is named relative to the workspace root and must
resolve (symlinks followed) inside it. Each refusal is one ``InvalidInput`` whose ``where`` is
the argument's name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from assay._errors import InvalidInput

MAX_TEXT = 1 << 20
"""Longest string argument of the interaction lane (a candidate term, a term to infer), in
characters; the check tool's answer is bounded by the argument cap instead."""
MAX_POSITION = 10_000_000
"""Largest line or column accepted (a hole further down is not in a 4 MiB obligation)."""


def exact_keys(
    arguments: Mapping[str, Any], *, required: tuple[str, ...], optional: tuple[str, ...]
) -> None:
    """Refuse an unknown argument (the first, sorted, is named) or a missing required one."""
    known = set(required) | set(optional)
    unknown = sorted(key for key in arguments if key not in known)
    if unknown:
        raise InvalidInput(
            f"unknown argument (known: {', '.join(sorted(known))})", where=unknown[0]
        )
    for key in required:
        if key not in arguments:
            raise InvalidInput("required", where=key)


def within_cap(arguments: Mapping[str, Any], cap: int) -> None:
    """Refuse arguments whose JSON text is longer than ``cap`` bytes: one call never makes the
    server judge more than a task file could hold."""
    size = len(json.dumps(arguments, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > cap:
        raise InvalidInput(f"the arguments are {size} bytes, over the cap of {cap}", where="*")


def text(arguments: Mapping[str, Any], key: str, *, default: str | None = None) -> str | None:
    """A string argument of at most ``MAX_TEXT`` characters, or ``default`` when absent."""
    if key not in arguments:
        return default
    value = arguments[key]
    if not isinstance(value, str):
        raise InvalidInput(f"must be a string, not {_json_type(value)}", where=key)
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"longer than {MAX_TEXT} characters", where=key)
    return value


def position(arguments: Mapping[str, Any], key: str) -> int:
    """A 1-based line or column: an integer (never a boolean, never 2.0), at least 1."""
    value = arguments[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"must be an integer, not {_json_type(value)}", where=key)
    if not 1 <= value <= MAX_POSITION:
        raise InvalidInput(f"must be between 1 and {MAX_POSITION}", where=key)
    return value


def flag(arguments: Mapping[str, Any], key: str, *, default: bool) -> bool:
    """A boolean argument (``true``/``false`` only), or ``default`` when absent."""
    if key not in arguments:
        return default
    value = arguments[key]
    if not isinstance(value, bool):
        raise InvalidInput(f"must be true or false, not {_json_type(value)}", where=key)
    return value


def file_under(root: Path | None, arguments: Mapping[str, Any], key: str) -> Path:
    """The file ``arguments[key]`` names, resolved (symlinks followed) inside ``root``.

    The same rule as an item's workspace (``assay.episodes``): a relative path, no ``..``, no
    absolute path, and it must still be inside the root once links are followed. Without a root
    no file is ever read. The resolved path is returned, so the file read is the one checked (a
    link swapped in later is a race only someone who can write under the root could run: the
    root must not be writable by whoever the work comes from).
    """
    name = text(arguments, key)
    if root is None:
        raise InvalidInput(
            "no file is read: the server was started without --workspace-root", where=key
        )
    pure = PurePosixPath(name or "")
    if not name or "\x00" in name or "\\" in name or pure.is_absolute() or ".." in pure.parts:
        raise InvalidInput(
            "must be a relative path inside the workspace root (no '..', no leading '/')",
            where=key,
        )
    base = root.resolve()
    try:
        resolved = (base / name).resolve(strict=True)
    except (OSError, RuntimeError):
        raise InvalidInput("no such file under the workspace root", where=key) from None
    if not resolved.is_relative_to(base):
        raise InvalidInput("leads outside the workspace root: refused, never read", where=key)
    if not resolved.is_file():
        raise InvalidInput("is not a regular file", where=key)
    return resolved


def _json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages (``true`` is a boolean, not a number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
