"""lineage indexes: covering (dataset, last seen) indexes on input/output; run.started_at

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21

A lineage step from a dataset reads every input/output row of that dataset
within the time window; the covering index answers it index-only (measured on
a 200k-row seed: buffers 1386 -> 613 for a one-week window). run.started_at
serves the catalogue's started-window filters.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ["created_at", "operation_id", "run_id", "job_id", "schema_id"]
COUNTERS = ["num_rows", "num_bytes", "num_files"]


def upgrade() -> None:
    for table, extra in (("input", []), ("output", ["types"])):
        op.drop_index(f"ix_{table}_dataset_id", table_name=table)
        op.create_index(
            f"ix_{table}_dataset_seen",
            table,
            ["dataset_id", "last_event_time"],
            postgresql_include=COLUMNS + COUNTERS + extra,
        )
    op.create_index("ix_run_started_at", "run", ["started_at"])


def downgrade() -> None:
    op.drop_index("ix_run_started_at", table_name="run")
    for table in ("input", "output"):
        op.drop_index(f"ix_{table}_dataset_seen", table_name=table)
        op.create_index(f"ix_{table}_dataset_id", table, ["dataset_id"])
