"""The one configuration object: limits every check obeys, passed explicitly in the context."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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
    """Folder of cached proof verdicts; None: ~/.cache/assay/judgments; "off": no cache."""
    allow_unisolated: bool = False
    """Let untrusted code run without bubblewrap (every outcome then says isolation: none)."""
    cgroup_parent: str = Field("/assay", pattern=r"^(self|/|(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+)$")
    """The cgroup (from the hierarchy's root) under which each sandboxed run gets its own;
    "self" nests runs under the verifier's own cgroup. Used when assay can write cgroups (root)."""

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
            raise InvalidInput(first["msg"], where=name) from None


DEFAULT_CONFIG = Config()
"""Shared by every context that does not bring its own (configs are immutable)."""
