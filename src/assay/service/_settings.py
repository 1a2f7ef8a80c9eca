"""What ``assay serve`` is told: where it listens, what it may read, and the bounds that keep it
from being flooded. One frozen object, passed to ``create_app``; nothing is read from globals."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay._config import Config


def _cores() -> int:
    return os.cpu_count() or 1


class Settings(BaseModel):
    """The service's settings. Every bound answers with a clear HTTP status when it is hit
    (413, 422, 429), never with unbounded memory or an unbounded wait."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    """The address to listen on; loopback unless the operator chooses otherwise."""
    port: int = Field(8600, ge=0, le=65535)
    """The TCP port (0: any free one, for tests)."""
    workers: int = Field(1, ge=1, le=64)
    """uvicorn worker processes. Each has its own sandbox pool and idempotency store."""
    workspace_root: Path | None = None
    """The only folder items may name paths in (workspaces, verifier-side files); None: an item
    that names a path is refused, and nothing outside an item is read."""
    verifier_root: Path | None = None
    """When set, verifier-side files (databases, schemas, hidden checks) resolve here and only
    workspaces under ``workspace_root`` (which is then required), and no verifier-side file may
    lie in ``workspace_root``: no item can name the verifier's folders as its workspace and read
    them back."""
    template: Path | None = None
    """The task template ``/get_reward`` turns each label into an item with; None: each label
    is itself a JSON task."""
    sandbox_jobs: int = Field(default_factory=_cores, ge=1, le=1024)
    """Sandboxed items (python, shell, program, proofs) run at once, per worker process."""
    queue_bound: int = Field(1024, ge=1, le=1_000_000)
    """Sandboxed items admitted and not yet finished (running or waiting), per worker process;
    a request that would pass it is answered 429 with ``Retry-After``."""
    max_requests: int = Field(64, ge=1, le=100_000)
    """Requests whose items are being read and judged at once, per worker process (each holds
    its items in memory while it waits for a thread); past it, 429 with ``Retry-After``. Their
    sandboxed items, once queued, count against ``queue_bound`` instead."""
    retry_after: int = Field(1, ge=1, le=3600)
    """Seconds a 429 asks the client to wait."""
    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024)
    """Largest request body; a larger one is 413."""
    max_items: int = Field(10_000, ge=1)
    """Most items (or OpenRLHF samples) in one request; more is 422."""
    idempotency_entries: int = Field(100_000, ge=0)
    """Results kept for idempotency keys (least recently used dropped first); 0: none kept."""
    config: Config = Field(default_factory=Config.from_env)
    """The limits every check obeys (``ASSAY_*`` environment variables)."""

    @model_validator(mode="after")
    def _roots_apart(self) -> Settings:
        """A verifier root without a workspace root would let workspaces resolve in it."""
        if self.verifier_root is not None and self.workspace_root is None:
            raise ValueError("verifier_root needs workspace_root (where workspaces are read)")
        return self
