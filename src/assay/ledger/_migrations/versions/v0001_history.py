"""The history table, its indexes, and the triggers that make it append-only.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

INDEXES = {  # a migration is a frozen snapshot: never import today's table from it
    "history_kind_subject": ("kind", "subject"),
    "history_subject": ("subject",),
    "history_problem_kind": ("problem", "kind"),
    "history_participant": ("participant", "problem", "kind"),
}

_REFUSE = "history is append-only: rows are never updated or deleted"

SQLITE_TRIGGERS = (
    f"CREATE TRIGGER history_no_update BEFORE UPDATE ON history "
    f"BEGIN SELECT RAISE(ABORT, '{_REFUSE}'); END",
    f"CREATE TRIGGER history_no_delete BEFORE DELETE ON history "
    f"BEGIN SELECT RAISE(ABORT, '{_REFUSE}'); END",
)
POSTGRESQL_TRIGGERS = (
    "CREATE FUNCTION history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN RAISE EXCEPTION '{_REFUSE} (% refused)', TG_OP; END $$",
    "CREATE TRIGGER history_no_change BEFORE UPDATE OR DELETE ON history "
    "FOR EACH ROW EXECUTE FUNCTION history_append_only()",
    "CREATE TRIGGER history_no_truncate BEFORE TRUNCATE ON history "
    "FOR EACH STATEMENT EXECUTE FUNCTION history_append_only()",
)


def upgrade() -> None:
    """Create ``history`` as ``assay.ledger._tables`` describes it, then its triggers."""
    op.create_table(
        "history",
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
    )
    for name, columns in INDEXES.items():
        op.create_index(name, "history", list(columns))
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_TRIGGERS if dialect == "sqlite" else POSTGRESQL_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    """Never: the ledger's history is not dropped by a migration."""
    raise NotImplementedError("the ledger's history is never dropped")
