"""The one configuration object: limits every check obeys, passed explicitly in the context."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay._errors import InvalidInput


class Config(BaseModel):
    """Limits that keep a check bounded. A limit that is hit gives ``inconclusive``, never a pass."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    regex_timeout: float = Field(1.0, gt=0)
    """Seconds a single regular-expression search may run before it is abandoned."""
    sql_timeout: float = Field(5.0, gt=0)
    """Seconds one SQL query (the verifier's or the answer's) may run."""
    sql_max_rows: int = Field(100_000, gt=0)
    """Rows read from one query; more is a refusal (answer) or inconclusive (verifier)."""
    max_file_bytes: int = Field(16 * 1024 * 1024, gt=0)
    """Largest workspace file a check reads; a larger one is inconclusive, not truncated."""
    max_staged_mb: int = Field(256, gt=0)
    """Largest workspace or input tree copied into a sandbox; more is inconclusive."""
    judgment_cache: str | None = None
    """Folder of cached proof verdicts and checker conformance; None: the ``judgments`` folder
    under ``cache_home``; "off": no cache."""
    cache_home: str | None = None
    """Base folder of assay's caches; None: ``$XDG_CACHE_HOME/assay`` (``~/.cache/assay``)."""
    key_file: str | None = None
    """The key that signs cached judgments; None: ``$XDG_CONFIG_HOME/assay/cache.key``."""
    agda_stdlib: str = Field("/usr/share/agda-stdlib", pattern=r"^/")
    """The Agda standard library that Agda proofs may import (its sources and interfaces); an
    absolute path, so the verifier and the sandbox read the same folder."""
    agda_toolchain: Literal["auto", "debian", "pypi"] = "auto"
    """Which Agda judges: "auto" (the default): the PyPI one when it and its library copy are
    installed (``scripts/agda-toolchain``), with Debian's for a file importing a module that
    copy lacks (and as the fallback when the PyPI one cannot load its library), else Debian's;
    "debian" (``agda`` on PATH, Agda 2.6.2.2, with ``agda_stdlib``); "pypi" (Agda 2.6.4.3 from
    PyPI in this Python's environment, with ``agda_pypi_stdlib``: about 3x faster here). Every
    verdict names the binary, version and command of the Agda that judged."""
    agda_tuned_runtime: bool = True
    """Start Agda's runtime with the garbage-collector options ``_agda_toolchain`` chose by
    measurement (a larger nursery: the collector took about 45 % of a stdlib judgment with the
    defaults); false: the plain ``agda`` command. The options are in every verdict's command
    and cache key; they change the time and memory of a judgment, never its verdict."""
    agda_pypi_stdlib: str | None = Field(None, pattern=r"^/")
    """The agda-stdlib copy whose interfaces the PyPI Agda built (never Debian's ``.agdai``);
    None: ``<sys.prefix>/share/assay/agda-2.6.4.3/agda-stdlib``."""
    lean_project: str | None = None
    """A Lake project whose toolchain and packages Lean proofs are checked with; None: none."""
    allow_unisolated: bool = False
    """Let untrusted code run without bubblewrap (every outcome then says isolation: none)."""
    cgroup_parent: str = Field("/assay", pattern=r"^(self|/|(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+)$")
    """The cgroup (from the hierarchy's root) under which each sandboxed run gets its own;
    "self" nests runs under the verifier's own cgroup. Used when assay can write cgroups (root)."""
    sandbox_python: str | None = Field(None, pattern=r"^/")
    """The Python that runs python checks' judge in the sandbox; None: the verifier's own. Another
    build of the same version (e.g. Debian's ``/usr/bin/python3.11``, which starts faster than a
    shared pyenv build); refused unless its version, bytecode and extension ABI match."""
    sandbox_zygote: bool = True
    """Fork python and shell checks' judges from a sandbox template (a judge started once, in
    which only trusted code runs; each check still gets fresh namespaces, mounts, cgroup, uid
    and seccomp filter: docs/security.md) instead of starting bubblewrap and an interpreter per
    check (false: the old path, about twice the CPU per check)."""
    db: str = "sqlite:///assay.db"
    """The ledger's store: ``sqlite:///PATH`` (a file, relative to the current folder unless
    PATH starts with ``/``) or ``postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE``."""
    blobs: str | None = None
    """The ledger's blob folder (artifacts and references by content hash); None: beside a
    SQLite file (``<file>.blobs``), or ``blobs`` under ``cache_home`` for PostgreSQL."""

    @field_validator("db")
    @classmethod
    def _known_store(cls, value: str) -> str:
        """Only the two stores the ledger is tested on; another URL is refused, not guessed at."""
        if value.startswith("sqlite:///"):
            path = value.removeprefix("sqlite:///")
            if not path or path == ":memory:" or "?" in path:
                raise ValueError(
                    "a sqlite URL names a file: sqlite:///PATH (no query, no :memory:)"
                )
            return value
        if value.startswith("postgresql+psycopg://") and len(value) > len("postgresql+psycopg://"):
            return value
        raise ValueError(
            "the store must be sqlite:///PATH or postgresql+psycopg://USER@HOST/DATABASE"
        )

    def judgments_folder(self) -> Path | None:
        """The folder of cached judgments, or None when the cache is off."""
        if self.judgment_cache == "off":
            return None
        if self.judgment_cache:
            return Path(self.judgment_cache)
        return self._cache_base() / "judgments"

    def blob_folder(self) -> Path:
        """The ledger's blob folder (see ``blobs``)."""
        if self.blobs:
            return Path(self.blobs)
        if self.db.startswith("sqlite:///"):
            return Path(self.db.removeprefix("sqlite:///") + ".blobs")
        return self._cache_base() / "blobs"

    def signing_key_file(self) -> Path:
        """The file holding the key that signs cached judgments."""
        if self.key_file:
            return Path(self.key_file)
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        return Path(base) / "assay" / "cache.key"

    def _cache_base(self) -> Path:
        if self.cache_home:
            return Path(self.cache_home)
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "assay"

    @classmethod
    def from_env(cls) -> Config:
        """Defaults, overridden by ``ASSAY_REGEX_TIMEOUT`` and friends (upper-case field names)."""
        values: dict[str, str] = {}
        for name in cls.model_fields:
            raw = os.environ.get(f"ASSAY_{name.upper()}")
            if raw is not None:
                values[name] = raw
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = f"ASSAY_{str(first['loc'][0]).upper()}"
            raise InvalidInput(first["msg"].removeprefix("Value error, "), where=name) from None


DEFAULT_CONFIG = Config()
"""Shared by every context that does not bring its own (configs are immutable)."""
