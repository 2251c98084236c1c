"""run.root_run_id (root of the parent chain) and run.checkpoints (streaming counters)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("run", sa.Column("root_run_id", sa.UUID(), nullable=True))
    op.add_column(
        "run", sa.Column("checkpoints", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.create_index(op.f("ix_run_root_run_id"), "run", ["root_run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_run_root_run_id"), table_name="run")
    op.drop_column("run", "checkpoints")
    op.drop_column("run", "root_run_id")
