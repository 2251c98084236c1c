"""dataset merge function: the greater format; moved rows keep the latest event's run and job

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-21

The consumer now stores each dataset's format (the storage facet's file format or
storage layer) and keeps the greatest one any event gave (by code point). The dataset
merge function kept the target's format and took the source's only when the target
had none, so a merged dataset's format depended on which location was merged into
which; it now keeps the greater one too.

An input, output or column-lineage row names the run and job of its operation. Should
events disagree about them, the consumer now keeps those of the latest event (equal
times: the greater run id, then the greater job by natural key) instead of the first
written; the merge function applies the same rule when two rows meet.
"""

import importlib
from collections.abc import Sequence
from types import ModuleType

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEEP_TARGET = "COALESCE(dataset.format, s.format)"
KEEP_GREATER = 'GREATEST(dataset.format COLLATE "C", s.format COLLATE "C")'

# A frozen copy of the consumer's rule at this revision (consumer/write/sql.py).
_JOB_BY_KEY = (
    "SELECT j.id FROM job j JOIN location l ON l.id = j.location_id"
    " WHERE j.id IN (x.job_id, excluded.job_id)"
    ' ORDER BY l.type COLLATE "C" DESC, l.name COLLATE "C" DESC, j.name COLLATE "C" DESC LIMIT 1'
)
_LATER = f"""excluded.last_event_time > x.last_event_time
      OR excluded.last_event_time = x.last_event_time AND (excluded.run_id > x.run_id
         OR excluded.run_id = x.run_id AND excluded.job_id <> x.job_id
            AND excluded.job_id = ({_JOB_BY_KEY}))"""
OWNER_SET = f"""    run_id = CASE WHEN {_LATER} THEN excluded.run_id ELSE x.run_id END,
    job_id = CASE WHEN {_LATER} THEN excluded.job_id ELSE x.job_id END,
"""
# Where the owner rule goes: before the counters of the I/O moves and before the kinds
# of the column-lineage moves (each appears twice in the function).
IO_ANCHOR = "    num_rows = GREATEST(x.num_rows, excluded.num_rows),\n"
CLL_ANCHOR = "    types = x.types | excluded.types,\n    last_event_time"


def _function(*, greater_format: bool, owner_rule: bool) -> str:
    """0007's merge function, with this revision's rules or without them."""
    m0006 = _module("0006_merge_schema_by_digest")
    m0007 = _module("0007_field_times")
    body = m0006.merge_datasets(m0007.IO_MOVE.replace("{newer}", m0007.SCHEMA_NEWER))
    for anchor in (KEEP_TARGET, IO_ANCHOR, CLL_ANCHOR):
        if anchor not in body:
            raise RuntimeError(f"0007's dataset merge function changed: {anchor!r} is gone")
    if greater_format:
        body = body.replace(KEEP_TARGET, KEEP_GREATER)
    if owner_rule:
        body = body.replace(IO_ANCHOR, OWNER_SET + IO_ANCHOR)
        body = body.replace(CLL_ANCHOR, OWNER_SET + CLL_ANCHOR)
    return body


def upgrade() -> None:
    op.execute(_function(greater_format=True, owner_rule=True))


def downgrade() -> None:
    op.execute(_function(greater_format=False, owner_rule=False))


def _module(name: str) -> ModuleType:
    # By import_module: the module names start with a digit.
    return importlib.import_module(f"migrations.versions.{name}")
