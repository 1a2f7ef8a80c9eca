"""Alembic environment: migrate on the connection ``_migrate`` passes (never from a URL here).

The connection is already inside a transaction holding the store's write lock (SQLite
``BEGIN IMMEDIATE``, PostgreSQL advisory lock), so Alembic runs every revision and records the
version in that one transaction: a second process opening a fresh store at the same moment waits,
then finds the schema at head and does nothing.
"""

from __future__ import annotations

from alembic import context

from assay.ledger._tables import metadata


def run() -> None:
    """Run the pending revisions on the caller's connection and transaction."""
    connection = context.config.attributes["connection"]
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()


run()
