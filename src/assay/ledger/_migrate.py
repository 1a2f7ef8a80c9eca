"""Bring a store's schema to head with Alembic, safely when several processes open it at once.

Opening an up-to-date store costs one query (``HEAD`` is compared with ``alembic_version``) and
never imports Alembic. Otherwise the migration runs on one connection inside one transaction that
first takes the store's write lock (SQLite ``BEGIN IMMEDIATE``, PostgreSQL
``pg_advisory_xact_lock``); DDL is transactional on both, so a crash leaves the old schema, and a
second process waits for the lock, then finds the schema at head.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from assay.ledger._engine import LOCK_KEY

HEAD = "0001"
"""The newest revision in ``_migrations/versions`` (a test holds it to Alembic's head)."""
SCRIPTS = Path(__file__).resolve().parent / "_migrations"


def current(engine: sa.Engine) -> str | None:
    """The store's schema revision, or None for a fresh store."""
    try:
        with engine.connect() as connection:
            return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    except sa.exc.DBAPIError:
        return None


def upgrade(engine: sa.Engine) -> None:
    """Run Alembic ``upgrade head`` unless the store is already there."""
    if current(engine) == HEAD:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    with engine.connect().execution_options(immediate=True) as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
