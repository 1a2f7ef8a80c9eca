"""The ledger's errors: its own machinery failing, never a finding about anyone's work."""

from __future__ import annotations

from assay._errors import AssayError


class LedgerError(AssayError):
    """The store cannot do what was asked: it cannot be opened or migrated, a write failed, or a
    blob's bytes no longer match their hash. Exit 1: assay's side, not the caller's input."""


class BlobMissing(LedgerError):
    """No blob with this hash is stored (never stored, or deleted when it was withdrawn)."""

    def __init__(self, sha256: str) -> None:
        self.sha256 = sha256
        super().__init__(f"blob {sha256} is not in the store (never stored, or withdrawn)")
