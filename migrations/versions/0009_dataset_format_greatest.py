"""dataset merge function: a merged dataset keeps the greater format

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-21

The consumer now stores each dataset's format (the storage facet's file format or
storage layer) and keeps the greatest one any event gave (by code point). The dataset
merge function kept the target's format and took the source's only when the target
had none, so a merged dataset's format depended on which location was merged into
which; it now keeps the greater one too.
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


def _function(format_rule: str) -> str:
    """0007's merge function with the given format rule."""
    m0006 = _module("0006_merge_schema_by_digest")
    m0007 = _module("0007_field_times")
    body = m0006.merge_datasets(m0007.IO_MOVE.replace("{newer}", m0007.SCHEMA_NEWER))
    if KEEP_TARGET not in body:
        raise RuntimeError("0007's dataset merge function no longer has its format rule")
    return body.replace(KEEP_TARGET, format_rule)


def upgrade() -> None:
    op.execute(_function(KEEP_GREATER))


def downgrade() -> None:
    op.execute(_function(KEEP_TARGET))


def _module(name: str) -> ModuleType:
    # By import_module: the module names start with a digit.
    return importlib.import_module(f"migrations.versions.{name}")
