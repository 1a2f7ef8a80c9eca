"""The judgment cache: a verdict is a pure function of the exact bytes, toolchain, flags and limits.

The key is the sha256 of one canonical encoding of every component (:func:`cache_key`): each
checked file's name and sha256, every keyword the judge passes (language, toolchain version and
library identity, flags, steps, allowed axioms as a list, the run's limits, the isolation), and
the code that judged (:func:`assay._signed.judging_code`: assay's version and a sha256 of its
verdict-deciding source), so a verdict stored before a fix to assay's reading of a run is never
served after it. A hit returns the stored verdict marked ``cached`` without spawning anything.

Only clean judgments are stored: the file checks, or it does not, with an exit code and no limit
hit. A timeout, an out-of-memory, any limit, or a machine failure is never stored, so a verdict
that a limit caused can never come back as a finding about the work (and the limits are in the
key besides). Entries are signed (:mod:`assay._signed`): a forged, tampered or foreign entry is
a miss and is removed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from assay._config import Config
from assay._signed import SignedStore, canonical_digest, judging_code
from assay.proofs._verdict import Verdict

KEY_SCHEMA = "assay.judgment-key/3"


def cache_key(files: Mapping[str, bytes], **parts: object) -> str:
    """sha256 of the canonical JSON of the files' hashes, every named part (JSON values) and
    the judging code."""
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    return canonical_digest(
        {"schema": KEY_SCHEMA, "code": judging_code(), "files": hashes, "parts": parts}
    )


def cacheable(verdict: Verdict) -> bool:
    """A clean green/red judgment: the file checks or does not, it exited, no limit was hit."""
    return (
        verdict.finding in ("checks", "does_not_check")
        and verdict.limit is None
        and verdict.exit_code is not None
        and not verdict.cached
    )


class JudgmentCache:
    """A private folder of signed verdicts, one file per key, written atomically (folders 0700).

    A folder the verifier does not own or others can write is refused: nothing is cached
    (``store.refused`` says why)."""

    def __init__(self, folder: Path, key_file: Path | None = None) -> None:
        self.folder = folder
        self.store = SignedStore(self.folder, "judgment", key_file)

    def get(self, key: str) -> Verdict | None:
        """The verdict stored under ``key`` (marked ``cached``), or None; a bad entry is removed."""
        payload = self.store.get(key)
        if payload is None:
            return None
        try:
            verdict = Verdict.model_validate({k: v for k, v in payload.items() if k != "command"})
        except ValidationError:
            verdict = None
        if verdict is None or not cacheable(verdict):
            self.store.remove(key)
            return None
        return verdict.model_copy(update={"cached": True})

    def put(self, key: str, verdict: Verdict) -> None:
        """Store ``verdict`` under ``key`` when it is a clean judgment (``cacheable``)."""
        if cacheable(verdict):
            self.store.put(key, verdict.to_json())


def cache_for(config: Config) -> JudgmentCache | None:
    """The judgment cache ``config`` names (``Config.judgments_folder``, signed with
    ``Config.signing_key_file``); None when the cache is off. One per folder and key."""
    folder = config.judgments_folder()
    return None if folder is None else _cache(folder, config.signing_key_file())


@lru_cache(maxsize=8)
def _cache(folder: Path, key_file: Path) -> JudgmentCache:
    return JudgmentCache(folder, key_file)
