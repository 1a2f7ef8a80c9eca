"""The judgment cache: a verdict is a pure function of the exact bytes, toolchain and flags.

Keyed by the sha256 of every checked file's bytes, the toolchain's version, the flags and the
library's identity; a hit returns the stored verdict marked ``cached`` without spawning anything.
Only definite verdicts (checks / does not check) are stored, never a timeout or a machine failure.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.proofs._verdict import Verdict


def cache_key(
    files: Mapping[str, bytes], version: str, flags: Sequence[str], library: str, extra: str = ""
) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    for part in (version, "\0".join(flags), library, extra):
        digest.update(b"\1" + part.encode())
    return digest.hexdigest()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "assay" / "judgments"


class JudgmentCache:
    """A folder of verdicts, one JSON file per key, written atomically."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_cache_dir()

    def get(self, key: str) -> Verdict | None:
        path = self.folder / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text())
            return Verdict.model_validate(data).model_copy(update={"cached": True})
        except (OSError, ValueError):
            return None

    def put(self, key: str, verdict: Verdict) -> None:
        if verdict.finding == "machinery" or verdict.limit is not None:
            return
        folder = self.folder / key[:2]
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            out.write(verdict.model_dump_json())
        os.replace(temporary, folder / f"{key}.json")
