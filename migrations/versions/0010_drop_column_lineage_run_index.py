"""column_lineage: drop ix_column_lineage_run_id, which no statement uses

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

Column lineage is read by dataset (lineage graphs: the source and target dataset indexes)
and by operation (an operation's page, and the consumer's anchor moves: the primary key's
(created_at, operation_id) prefix); nothing looks its rows up by run. The run index was
kept up to date on every insert all the same: column lineage is the consumer's largest
write (1.7 rows per benchmark event), and without this index the same 20k-event stream
writes 5.4% less WAL (2,312 -> 2,187 bytes per event, benchmarks/README.md, twenty-fifth
set).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # On the partitioned parent: drops every partition's index with it.
    op.drop_index("ix_column_lineage_run_id", table_name="column_lineage")


def downgrade() -> None:
    op.create_index("ix_column_lineage_run_id", "column_lineage", ["run_id"], unique=False)
