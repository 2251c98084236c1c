"""operation.ended_reason: the error message of a failed operation (e.g. a Spark SQL job)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("operation", sa.Column("ended_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("operation", "ended_reason")
