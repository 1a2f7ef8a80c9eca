"""The ledger: an append-only, hash-chained history and a content-addressed blob store.

It stores opaque entries (``NewEntry``: kind, subject, a JSON body, optional problem and
participant) in one chain and bytes by their sha256; the platform gives them meaning. SQLite (a
file, WAL) by default, PostgreSQL when ``ASSAY_DB`` is a ``postgresql+psycopg://`` URL; the
schema is kept by Alembic migrations shipped in this package. Rows are only ever inserted:
triggers refuse UPDATE and DELETE (and TRUNCATE on PostgreSQL), and ``Ledger.verify`` walks the
chain and names the first row that was edited, deleted or reordered.
"""

from assay._wire import unvalidated
from assay.ledger._blobs import Blob, BlobStore
from assay.ledger._errors import BlobMissing, LedgerError
from assay.ledger._ledger import Ledger, Reader
from assay.ledger._models import ChainReport, Entry, NewEntry

__all__ = [
    "Blob",
    "BlobMissing",
    "BlobStore",
    "ChainReport",
    "Entry",
    "Ledger",
    "LedgerError",
    "NewEntry",
    "Reader",
    "unvalidated",
]
