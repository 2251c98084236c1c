"""A RUN or OPERATION level's rows, fetched one by one, grouped per (direction, dataset,
process) as `queries._IO_AGGREGATE` groups them in SQL.

Nearly every such group is one row (an operation has one row per dataset, a run one per
operation that read or wrote it), and a one-row group is its row: the aggregate of a single
row has the row's own values. The few larger groups become tuples of the same columns.
Groups keep the order of their first rows.
"""

from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import Any

from server.lineage import native

# A row: (dir, dataset_id, process_id, num_rows, num_bytes, num_files, types, first_seen_at,
# last_seen_at, schema_id), an asyncpg Record or a tuple; symlink columns may follow.
Row = Any


def merged(group: Sequence[Row]) -> tuple[Any, ...]:
    """The aggregate's row for `group` (rows of one direction, dataset and process): counters
    and output types summed / OR-ed over the rows that have them (NULL if none has), the
    earliest creation and the latest event, and the schema of the latest row that has one
    (equal times: the greater schema id)."""
    first = group[0]
    schemas = [(row[8], row[9]) for row in group if row[9] is not None]
    return (
        first[0],
        first[1],
        first[2],
        _sum(row[3] for row in group),
        _sum(row[4] for row in group),
        _sum(row[5] for row in group),
        _bit_or(row[6] for row in group),
        min(row[7] for row in group),
        max(row[8] for row in group),
        max(schemas)[1] if schemas else None,
    )


def _sum(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _bit_or(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    found = 0
    for value in present:
        found |= value
    return found


NATIVE_GROUP = native.io_row_grouper(merged)
NATIVE_DECLINES = native.declines()


def group_io_rows(
    rows: Sequence[Row], native_group: native.GroupRows | None = NATIVE_GROUP
) -> list[Row]:
    """One row per (direction, dataset, process) of `rows` (natively when the module is
    installed, unless it declines the rows)."""
    if native_group is not None:
        with suppress(NATIVE_DECLINES):
            return native_group(rows)
    groups: dict[tuple[Any, Any, Any], list[Row]] = {}
    for row in rows:
        key = (row[0], row[1], row[2])
        found = groups.get(key)
        if found is None:
            groups[key] = [row]
        else:
            found.append(row)
    return [group[0] if len(group) == 1 else merged(group) for group in groups.values()]
