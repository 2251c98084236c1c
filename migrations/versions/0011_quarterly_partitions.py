"""Time-series tables: one partition per quarter instead of one per month

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

A lineage statement over all history cannot prune partitions (a row made before the
window may still have been seen inside it), so each one sets up an index scan in every
partition of the tables it reads, ~30-40 us per partition per level statement on the
server's generic plans, and a level from runs descends every partition's run index once
per run (PostgreSQL 15 starts each array element from the root). That cost grew with
every month of history. Quarters make it a third. Measured on the 1M-event benchmark
database, 16 partitions per table before and 6 after (benchmarks/README.md, twenty-sixth
set): PostgreSQL's part of the capped depth-5 RUN graphs 21-28% less at p50, the depth-5
graphs' p95 through HTTP 3-28% less. What it costs: retention by dropping partitions is
per quarter, and the rewritten partitions' freshly built indexes make the first updates
of their rows slower until their pages have split (replaying 20k events already stored:
-16% right after the migration).

The upgrade rewrites every existing monthly partition into its quarter's (rows copied,
the month partitions dropped, rows of the quarter waiting in the default partition moved
too), in the migration's transaction, so nothing reads or writes the tables meanwhile;
the downgrade does the reverse. The consumer asks for the partition of each quarter it
writes (`consumer/write/partitions.py`).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIME_SERIES_TABLES = ("run", "operation", "input", "output", "column_lineage")


@dataclass(frozen=True)
class Unit:
    """A partition's span: its date_trunc() field, its length in months, its name's
    suffix (to_char's pattern, and the letter before the period's number)."""

    field: str
    months: int
    pattern: str
    letter: str
    digits: int

    def name(self, table: str, start: datetime) -> str:
        number = (start.month - 1) // self.months + 1
        return f"{table}_y{start.year:04d}{self.letter}{number:0{self.digits}d}"

    def periods(self, lo: datetime, hi: datetime) -> list[datetime]:
        """Starts of the periods of this unit that overlap [lo, hi)."""
        at = datetime(lo.year, (lo.month - 1) // self.months * self.months + 1, 1, tzinfo=UTC)
        found = []
        while at < hi:
            found.append(at)
            at = _add_months(at, self.months)
        return found


MONTH = Unit("month", 1, '"y"YYYY"m"MM', "m", 2)  # run_y2026m01
QUARTER = Unit("quarter", 3, '"y"YYYY"q"Q', "q", 1)  # run_y2026q1


def _add_months(at: datetime, months: int) -> datetime:
    index = at.year * 12 + at.month - 1 + months
    return at.replace(year=index // 12, month=index % 12 + 1)


def ensure_partition_function(unit: Unit) -> str:
    """`threadline_ensure_partition(day)`: the partition of every time-series table for
    the period holding `day`, idempotent and safe under concurrent workers (advisory
    lock); rows of the period already in the default partition move into it, so a
    partition may appear at any time without failing ingest. With MONTH, it does what
    migration 0001's did (the downgrade restores it). 0001's text is left where it is, not
    imported: an applied migration stays as it ran. (The parameter keeps 0001's name,
    which CREATE OR REPLACE cannot change: any day of the period will do.)"""
    return f"""
CREATE OR REPLACE FUNCTION threadline_ensure_partition(p_month date) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  period_start timestamp := date_trunc('{unit.field}', p_month::timestamp);
  lo timestamptz := period_start AT TIME ZONE 'UTC';
  hi timestamptz := (period_start + interval '{unit.months} month') AT TIME ZONE 'UTC';
  suffix text := to_char(period_start, '{unit.pattern}');
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


def _partitions(conn: sa.Connection, table: str, unit: Unit) -> dict[str, datetime]:
    """The table's partitions of `unit` (named as the function names them), by their starts."""
    names = conn.execute(
        sa.text(
            "SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = CAST(:parent AS regclass)"
        ),
        {"parent": table},
    ).scalars()
    found = re.compile(rf"{table}_y(\d{{4}}){unit.letter}(\d+)")
    starts = {}
    for name in names:
        if match := found.fullmatch(name):
            year, number = int(match.group(1)), int(match.group(2))
            starts[name] = datetime(year, (number - 1) * unit.months + 1, 1, tzinfo=UTC)
    return starts


def repartition(source: Unit, target: Unit) -> None:
    """Every `source` partition of the time-series tables rewritten as `target` ones."""
    conn = op.get_bind()
    for table in TIME_SERIES_TABLES:
        columns = ", ".join(
            f'"{c}"'
            for c in conn.execute(
                sa.text(
                    "SELECT attname FROM pg_attribute WHERE attrelid = CAST(:t AS regclass)"
                    " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
                ),
                {"t": table},
            ).scalars()
        )
        old = _partitions(conn, table, source)
        spans = {name: (lo, _add_months(lo, source.months)) for name, lo in old.items()}
        starts = sorted({p for lo, hi in spans.values() for p in target.periods(lo, hi)})
        # Filled while the old ones are still attached (they overlap), attached after.
        for start in starts:
            lo, hi = start, _add_months(start, target.months)
            new = target.name(table, start)
            op.execute(f'CREATE TABLE "{new}" (LIKE "{table}" INCLUDING DEFAULTS)')
            for name, (old_lo, old_hi) in spans.items():
                if old_lo < hi and lo < old_hi:
                    conn.execute(
                        sa.text(
                            f'INSERT INTO "{new}" ({columns}) SELECT {columns} FROM "{name}"'  # noqa: S608 - names from the catalogue
                            " WHERE created_at >= :lo AND created_at < :hi"
                        ),
                        {"lo": lo, "hi": hi},
                    )
        for name in spans:
            op.execute(f'ALTER TABLE "{table}" DETACH PARTITION "{name}"')
            op.execute(f'DROP TABLE "{name}"')
        for start in starts:
            lo, hi = start, _add_months(start, target.months)
            new = target.name(table, start)
            conn.execute(
                sa.text(
                    f'WITH moved AS (DELETE FROM "{table}_default"'  # noqa: S608 - names from the catalogue
                    " WHERE created_at >= :lo AND created_at < :hi RETURNING *)"
                    f' INSERT INTO "{new}" SELECT * FROM moved'
                ),
                {"lo": lo, "hi": hi},
            )
            op.execute(
                f'ALTER TABLE "{table}" ATTACH PARTITION "{new}"'
                f" FOR VALUES FROM ('{lo.isoformat()}') TO ('{hi.isoformat()}')"
            )
            # The planner's statistics now, not when autovacuum next comes by.
            op.execute(f'ANALYZE "{new}"')


def upgrade() -> None:
    repartition(MONTH, QUARTER)
    op.execute(ensure_partition_function(QUARTER))
    # As 0001 did for months: the current period and the next month's exist from the start.
    op.execute("SELECT threadline_ensure_partition(current_date)")
    op.execute("SELECT threadline_ensure_partition((current_date + interval '1 month')::date)")


def downgrade() -> None:
    repartition(QUARTER, MONTH)
    op.execute(ensure_partition_function(MONTH))
    op.execute("SELECT threadline_ensure_partition(current_date)")
    op.execute("SELECT threadline_ensure_partition((current_date + interval '1 month')::date)")
