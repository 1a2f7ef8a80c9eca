"""What the verifier knows about one episode or submission.

Checks read the context and never write it: the workspace is read-only to them, and receipts
come from the retrieval provider, never from the policy's account of what it read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from assay._config import DEFAULT_CONFIG, Config

if TYPE_CHECKING:
    from assay.sandbox import Sandbox


class Receipt(BaseModel):
    """One fetch served by the retrieval provider during the episode."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    url: str = Field(min_length=1)
    status: int = Field(ge=100, le=599)
    """HTTP status of the fetch; only 2xx means the source was actually served."""


@dataclass(frozen=True, init=False)
class CheckContext:
    """Inputs a check may read. Missing inputs make input-dependent checks inconclusive."""

    answer: str | None = None
    """The episode's final answer text; None when there is none (not the same as "")."""
    workspace: Path | None = None
    """The agent's workspace, read-only to checks."""
    receipts: tuple[Receipt, ...] = ()
    """Fetches recorded by the retrieval provider."""
    base_dir: Path | None = None
    """The folder verifier-side files (databases, hidden checks) resolve against."""
    config: Config = DEFAULT_CONFIG
    sandbox: Sandbox | None = None
    """Where kinds that run code run it; None: a default one, built from ``config``."""

    def __init__(
        self,
        answer: str | None = None,
        workspace: Path | None = None,
        receipts: tuple[Receipt, ...] = (),
        base_dir: Path | None = None,
        config: Config = DEFAULT_CONFIG,
        sandbox: Sandbox | None = None,
    ) -> None:
        """The generated ``__init__`` of a frozen dataclass sets each field through
        ``object.__setattr__``; one context is built per answer check, so this one fills the
        instance's dict at once (same fields, same defaults: a test compares them)."""
        self.__dict__.update(
            answer=answer,
            workspace=workspace,
            receipts=receipts,
            base_dir=base_dir,
            config=config,
            sandbox=sandbox,
        )
