"""initial schema: the whole lineage model, monthly partitions, helper functions

Revision ID: 0001
Revises:
Create Date: 2026-11-21 13:59:32.614493
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


TIME_SERIES_TABLES = ("run", "operation", "input", "output", "column_lineage")

# Creates one month's partition of every time-series table, idempotently and
# safely under concurrent workers (advisory lock). Rows that already landed in
# the default partition for that month are moved into the new partition, so a
# partition may appear at any time without failing ingest. Called by the
# consumer (in its own short transaction) for every month it is about to write.
ENSURE_PARTITION = """
CREATE OR REPLACE FUNCTION threadline_ensure_partition(p_month date) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  month_start timestamp := date_trunc('month', p_month::timestamp);
  lo timestamptz := month_start AT TIME ZONE 'UTC';
  hi timestamptz := (month_start + interval '1 month') AT TIME ZONE 'UTC';
  suffix text := to_char(month_start, '"y"YYYY"m"MM');
  parent text;
  part text;
  has_rows boolean;
  created integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('threadline_ensure_partition'));
  FOREACH parent IN ARRAY ARRAY['run', 'operation', 'input', 'output', 'column_lineage'] LOOP
    part := parent || '_' || suffix;
    CONTINUE WHEN to_regclass(part) IS NOT NULL;
    EXECUTE format(
      'SELECT EXISTS (SELECT 1 FROM %I WHERE created_at >= $1 AND created_at < $2)',
      parent || '_default') INTO has_rows USING lo, hi;
    IF has_rows THEN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
      EXECUTE format(
        'WITH moved AS (DELETE FROM %I WHERE created_at >= $1 AND created_at < $2 RETURNING *)'
        ' INSERT INTO %I SELECT * FROM moved', parent || '_default', part) USING lo, hi;
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     parent, part, lo, hi);
    ELSE
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                     part, parent, lo, hi);
    END IF;
    created := created + 1;
  END LOOP;
  RETURN created;
END
$fn$;
"""

# Grants the server's login role read-only access; threadline-migrate calls it
# after every upgrade. A no-op (false) when the role does not exist.
GRANT_READER = """
CREATE OR REPLACE FUNCTION threadline_grant_reader(p_role text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_role) THEN
    RETURN false;
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', p_role);
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', p_role);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO %I', p_role);
  RETURN true;
END
$fn$;
"""


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    _create_tables()
    for table in TIME_SERIES_TABLES:
        op.execute(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")
    op.execute(ENSURE_PARTITION)
    op.execute(GRANT_READER)
    # The current month and the next one exist from the start; others appear on demand.
    op.execute("SELECT threadline_ensure_partition(current_date)")
    op.execute("SELECT threadline_ensure_partition((current_date + interval '1 month')::date)")


def _create_tables() -> None:
    op.create_table(
        "column_lineage",
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("operation_id", sa.UUID(), nullable=False),
        sa.Column("source_dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("source_column", sa.Text(), nullable=False),
        sa.Column("target_dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("target_column", sa.Text(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("types", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_event_time", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "created_at",
            "operation_id",
            "source_dataset_id",
            "source_column",
            "target_dataset_id",
            "target_column",
            name=op.f("pk_column_lineage"),
        ),
        postgresql_partition_by="RANGE (created_at)",
    )
    op.create_index(op.f("ix_column_lineage_run_id"), "column_lineage", ["run_id"], unique=False)
    op.create_index(
        op.f("ix_column_lineage_source_dataset_id"),
        "column_lineage",
        ["source_dataset_id"],
        unique=False,
    )
    op.create_index(
        "ix_column_lineage_target",
        "column_lineage",
        ["target_dataset_id", "target_column"],
        unique=False,
    )
    op.create_table(
        "input",
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("operation_id", sa.UUID(), nullable=False),
        sa.Column("dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("schema_id", sa.BigInteger(), nullable=True),
        sa.Column("num_rows", sa.BigInteger(), nullable=True),
        sa.Column("num_bytes", sa.BigInteger(), nullable=True),
        sa.Column("num_files", sa.BigInteger(), nullable=True),
        sa.Column("last_event_time", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("created_at", "operation_id", "dataset_id", name=op.f("pk_input")),
        postgresql_partition_by="RANGE (created_at)",
    )
    op.create_index(op.f("ix_input_dataset_id"), "input", ["dataset_id"], unique=False)
    op.create_index(op.f("ix_input_job_id"), "input", ["job_id"], unique=False)
    op.create_index(op.f("ix_input_operation_id"), "input", ["operation_id"], unique=False)
    op.create_index(op.f("ix_input_run_id"), "input", ["run_id"], unique=False)
    op.create_table(
        "location",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("external_id", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_location")),
        sa.UniqueConstraint("type", "name", name=op.f("uq_location_type_name")),
    )
    op.create_index(
        "ix_location_name_trgm",
        "location",
        ["name"],
        unique=False,
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.create_table(
        "operation",
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("type", sa.Text(), nullable=True),
        sa.Column("status", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("group", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("sql_query", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_event_time", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("created_at", "id", name=op.f("pk_operation")),
        postgresql_partition_by="RANGE (created_at)",
    )
    op.create_index(op.f("ix_operation_id"), "operation", ["id"], unique=False)
    op.create_index(op.f("ix_operation_run_id"), "operation", ["run_id"], unique=False)
    op.create_table(
        "output",
        sa.Column("types", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("operation_id", sa.UUID(), nullable=False),
        sa.Column("dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("schema_id", sa.BigInteger(), nullable=True),
        sa.Column("num_rows", sa.BigInteger(), nullable=True),
        sa.Column("num_bytes", sa.BigInteger(), nullable=True),
        sa.Column("num_files", sa.BigInteger(), nullable=True),
        sa.Column("last_event_time", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("created_at", "operation_id", "dataset_id", name=op.f("pk_output")),
        postgresql_partition_by="RANGE (created_at)",
    )
    op.create_index(op.f("ix_output_dataset_id"), "output", ["dataset_id"], unique=False)
    op.create_index(op.f("ix_output_job_id"), "output", ["job_id"], unique=False)
    op.create_index(op.f("ix_output_operation_id"), "output", ["operation_id"], unique=False)
    op.create_index(op.f("ix_output_run_id"), "output", ["run_id"], unique=False)
    op.create_table(
        "run",
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("parent_run_id", sa.UUID(), nullable=True),
        sa.Column("status", sa.SmallInteger(), server_default="0", nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_by_user_id", sa.BigInteger(), nullable=True),
        sa.Column("start_reason", sa.Text(), nullable=True),
        sa.Column("ended_reason", sa.Text(), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=True),
        sa.Column("running_log_url", sa.Text(), nullable=True),
        sa.Column("persistent_log_url", sa.Text(), nullable=True),
        sa.Column("last_event_time", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("created_at", "id", name=op.f("pk_run")),
        postgresql_partition_by="RANGE (created_at)",
    )
    op.create_index(op.f("ix_run_id"), "run", ["id"], unique=False)
    op.create_index("ix_run_job_id_created_at", "run", ["job_id", "created_at"], unique=False)
    op.create_index(op.f("ix_run_parent_run_id"), "run", ["parent_run_id"], unique=False)
    op.create_index(op.f("ix_run_status"), "run", ["status"], unique=False)
    op.create_table(
        "schema",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("digest", sa.UUID(), nullable=False),
        sa.Column("fields", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schema")),
        sa.UniqueConstraint("digest", name=op.f("uq_schema_digest")),
    )
    op.create_table(
        "user_account",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_account")),
        sa.UniqueConstraint("name", name=op.f("uq_user_account_name")),
    )
    op.create_table(
        "uuid_anchor",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uuid_anchor")),
    )
    op.create_table(
        "address",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("location_id", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["location.id"],
            name=op.f("fk_address_location_id_location"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_address")),
        sa.UniqueConstraint("url", name=op.f("uq_address_url")),
    )
    op.create_index(op.f("ix_address_location_id"), "address", ["location_id"], unique=False)
    op.create_table(
        "dataset",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("location_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("format", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["location.id"],
            name=op.f("fk_dataset_location_id_location"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset")),
        sa.UniqueConstraint("location_id", "name", name=op.f("uq_dataset_location_id_name")),
    )
    op.create_index(
        "ix_dataset_name_trgm",
        "dataset",
        ["name"],
        unique=False,
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.create_table(
        "job",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("location_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), server_default="UNKNOWN", nullable=False),
        sa.Column("parent_job_id", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["location.id"],
            name=op.f("fk_job_location_id_location"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["parent_job_id"],
            ["job.id"],
            name=op.f("fk_job_parent_job_id_job"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job")),
        sa.UniqueConstraint("location_id", "name", name=op.f("uq_job_location_id_name")),
    )
    op.create_index(
        "ix_job_name_trgm",
        "job",
        ["name"],
        unique=False,
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.create_index(op.f("ix_job_parent_job_id"), "job", ["parent_job_id"], unique=False)
    op.create_index(op.f("ix_job_type"), "job", ["type"], unique=False)
    op.create_table(
        "dataset_symlink",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("from_dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("to_dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["from_dataset_id"],
            ["dataset.id"],
            name=op.f("fk_dataset_symlink_from_dataset_id_dataset"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["to_dataset_id"],
            ["dataset.id"],
            name=op.f("fk_dataset_symlink_to_dataset_id_dataset"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_symlink")),
        sa.UniqueConstraint(
            "from_dataset_id",
            "to_dataset_id",
            name=op.f("uq_dataset_symlink_from_dataset_id_to_dataset_id"),
        ),
    )
    op.create_index(
        op.f("ix_dataset_symlink_to_dataset_id"), "dataset_symlink", ["to_dataset_id"], unique=False
    )
    op.create_table(
        "job_dataset",
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("dataset_id", sa.BigInteger(), nullable=False),
        sa.Column("direction", sa.SmallInteger(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["dataset.id"],
            name=op.f("fk_job_dataset_dataset_id_dataset"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["job.id"], name=op.f("fk_job_dataset_job_id_job"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("job_id", "dataset_id", "direction", name=op.f("pk_job_dataset")),
    )
    op.create_index(op.f("ix_job_dataset_dataset_id"), "job_dataset", ["dataset_id"], unique=False)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS threadline_grant_reader(text)")
    op.execute("DROP FUNCTION IF EXISTS threadline_ensure_partition(date)")
    op.drop_index(op.f("ix_job_dataset_dataset_id"), table_name="job_dataset")
    op.drop_table("job_dataset")
    op.drop_index(op.f("ix_dataset_symlink_to_dataset_id"), table_name="dataset_symlink")
    op.drop_table("dataset_symlink")
    op.drop_index(op.f("ix_job_type"), table_name="job")
    op.drop_index(op.f("ix_job_parent_job_id"), table_name="job")
    op.drop_index(
        "ix_job_name_trgm",
        table_name="job",
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.drop_table("job")
    op.drop_index(
        "ix_dataset_name_trgm",
        table_name="dataset",
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.drop_table("dataset")
    op.drop_index(op.f("ix_address_location_id"), table_name="address")
    op.drop_table("address")
    op.drop_table("uuid_anchor")
    op.drop_table("user_account")
    op.drop_table("schema")
    op.drop_index(op.f("ix_run_status"), table_name="run")
    op.drop_index(op.f("ix_run_parent_run_id"), table_name="run")
    op.drop_index("ix_run_job_id_created_at", table_name="run")
    op.drop_index(op.f("ix_run_id"), table_name="run")
    op.drop_table("run")
    op.drop_index(op.f("ix_output_run_id"), table_name="output")
    op.drop_index(op.f("ix_output_operation_id"), table_name="output")
    op.drop_index(op.f("ix_output_job_id"), table_name="output")
    op.drop_index(op.f("ix_output_dataset_id"), table_name="output")
    op.drop_table("output")
    op.drop_index(op.f("ix_operation_run_id"), table_name="operation")
    op.drop_index(op.f("ix_operation_id"), table_name="operation")
    op.drop_table("operation")
    op.drop_index(
        "ix_location_name_trgm",
        table_name="location",
        postgresql_using="gin",
        postgresql_ops={"name": "gin_trgm_ops"},
    )
    op.drop_table("location")
    op.drop_index(op.f("ix_input_run_id"), table_name="input")
    op.drop_index(op.f("ix_input_operation_id"), table_name="input")
    op.drop_index(op.f("ix_input_job_id"), table_name="input")
    op.drop_index(op.f("ix_input_dataset_id"), table_name="input")
    op.drop_table("input")
    op.drop_index("ix_column_lineage_target", table_name="column_lineage")
    op.drop_index(op.f("ix_column_lineage_source_dataset_id"), table_name="column_lineage")
    op.drop_index(op.f("ix_column_lineage_run_id"), table_name="column_lineage")
    op.drop_table("column_lineage")
