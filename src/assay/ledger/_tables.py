"""The one table: ``history``, an append-only, hash-chained log of opaque entries.

The columns are what the chain hashes (see ``_chain``) plus the indexes the platform looks
entries up by. ``seq`` is assigned by the appender under the store's write lock (it is part of
the hashed bytes, so it must be known before the insert); ``at`` is ISO-8601 UTC text with
microseconds, so it sorts as text and reads the same on both dialects; ``body`` is canonical
JSON text, hashed exactly as stored.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

INDEXES: dict[str, tuple[str, ...]] = {
    "history_kind_subject": ("kind", "subject"),  # one kind (revocations), one document by id
    "history_subject": ("subject",),  # everything about one submission
    "history_problem_kind": ("problem", "kind"),  # a problem's revisions, without its submissions
    "history_participant": ("participant", "problem", "kind"),  # an allowance window, an attempt
}
"""Composite, so a lookup never scans a problem's or a participant's whole history."""

history = sa.Table(
    "history",
    metadata,
    sa.Column(
        "seq",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("problem", sa.Text),
    sa.Column("participant", sa.Text),
    sa.Column("at", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.Text, nullable=False),
    sa.Column("hash", sa.Text, nullable=False),
    *(sa.Index(name, *columns) for name, columns in INDEXES.items()),
)
"""seq is INTEGER PRIMARY KEY on SQLite (the rowid itself), BIGINT on PostgreSQL."""
