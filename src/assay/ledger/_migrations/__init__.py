"""Alembic's script folder for the ledger (``env.py`` and ``versions/``), run by ``_migrate``.

There is no ``alembic.ini``: ``_migrate`` builds the Alembic config in code and hands
``env.py`` an open connection that already holds the store's write lock."""
