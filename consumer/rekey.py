"""rekey: a merged batch re-keyed when alias resolution shows two of its locations are one.

The writer resolves location keys to ids; when two keys of one batch land on one
location, every record naming the non-canonical key is re-keyed and its kind merged
again, so that no statement touches one row twice.
"""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from consumer.merge import RULES, by_key
from consumer.records import (
    ColumnLineageRecord,
    DatasetKey,
    DatasetRecord,
    Extracted,
    IORecord,
    JobDatasetRecord,
    JobRecord,
    LocationKey,
    LocationRecord,
    RunRecord,
    SymlinkRecord,
)


class _Rekey:
    """Per record kind: the record with moved location keys replaced, or itself unchanged."""

    def __init__(self, moved: dict[LocationKey, LocationKey]) -> None:
        self.moved = moved

    def key(self, key: DatasetKey) -> DatasetKey:
        """A dataset or job key (both are (location type, location name, name))."""
        loc = self.moved.get((key[0], key[1]))
        return key if loc is None else (loc[0], loc[1], key[2])

    def location(self, r: LocationRecord) -> LocationRecord:
        to = self.moved.get(r.key)
        return r if to is None else replace(r, type=to[0], name=to[1])

    def dataset(self, r: DatasetRecord) -> DatasetRecord:
        to = self.moved.get(r.location)
        return r if to is None else replace(r, location=to)

    def symlink(self, r: SymlinkRecord) -> SymlinkRecord:
        source, target = self.key(r.source), self.key(r.target)
        same = source is r.source and target is r.target
        return r if same else replace(r, source=source, target=target)

    def job(self, r: JobRecord) -> JobRecord:
        to = self.moved.get(r.location)
        parent = self.key(r.parent) if r.parent else None
        if to is None and parent is r.parent:
            return r
        return replace(r, location=to or r.location, parent=parent)

    def run(self, r: RunRecord) -> RunRecord:
        job = self.key(r.job)
        return r if job is r.job else replace(r, job=job)

    def io(self, r: IORecord) -> IORecord:
        job, dataset = self.key(r.job), self.key(r.dataset)
        return r if job is r.job and dataset is r.dataset else replace(r, job=job, dataset=dataset)

    def column(self, r: ColumnLineageRecord) -> ColumnLineageRecord:
        job, source, target = self.key(r.job), self.key(r.source), self.key(r.target)
        if job is r.job and source is r.source and target is r.target:
            return r
        return replace(r, job=job, source=source, target=target)

    def declared(self, r: JobDatasetRecord) -> JobDatasetRecord:
        job, dataset = self.key(r.job), self.key(r.dataset)
        return r if job is r.job and dataset is r.dataset else replace(r, job=job, dataset=dataset)


def rekey(batch: Extracted, canon: dict[LocationKey, LocationKey]) -> Extracted:
    """The batch with location keys replaced by their canonical keys, merged again.

    Only records that name a moved location are rebuilt, and only the kinds that
    have such records are merged again (the rest stay merged and sorted).
    """
    moved = {k: v for k, v in canon.items() if k != v}
    if not moved:
        return batch
    r = _Rekey(moved)
    movers: dict[str, Callable[[Any], Any]] = {
        "locations": r.location,
        "datasets": r.dataset,
        "symlinks": r.symlink,
        "jobs": r.job,
        "runs": r.run,
        "ios": r.io,
        "column_lineage": r.column,
        "job_datasets": r.declared,
    }
    out = replace(batch)
    for name, mover in movers.items():
        records = getattr(batch, name)
        rebuilt = [mover(record) for record in records]
        if any(new is not old for new, old in zip(rebuilt, records, strict=True)):
            key, combine = RULES[name]
            setattr(out, name, by_key(rebuilt, key, combine))
    return out
