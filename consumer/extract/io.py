"""Inputs and outputs of a RunEvent, attached to the operation the integration chose."""

from consumer.decode import Event
from consumer.extract.columns import add_column_lineage
from consumer.extract.datasets import (
    add_dataset,
    input_stats,
    output_stats,
    output_types,
    schema_of,
)
from consumer.extract.facets import Json
from consumer.extract.runs import Placement
from consumer.records import DatasetKey, Extracted, IORecord
from shared.enums import IODirection


def add_io(out: Extracted, event: Event, at: Placement) -> None:
    """Inputs and outputs of the event with schema, statistics, output kind, column lineage."""
    stored: dict[tuple[str, str], DatasetKey] = {}
    keyed: list[tuple[IODirection, Json, DatasetKey]] = []
    for direction, datasets in (
        (IODirection.INPUT, event.inputs),
        (IODirection.OUTPUT, event.outputs),
    ):
        for dataset in datasets:
            key = add_dataset(out, dataset)
            stored[(str(dataset["namespace"]), str(dataset["name"]))] = key
            keyed.append((direction, dataset, key))
    for direction, dataset, key in keyed:
        out.ios.append(_record(out, event, at, dataset, key, direction))
        if direction == IODirection.OUTPUT:
            where = (at.operation_id, at.created_at, at.run_id, at.job, event.event_time)
            add_column_lineage(out, dataset, key, where, stored)


def _record(
    out: Extracted, event: Event, at: Placement, dataset: Json, key: DatasetKey, direction: int
) -> IORecord:
    is_output = direction == IODirection.OUTPUT
    rows, size, files = output_stats(dataset) if is_output else input_stats(dataset)
    return IORecord(
        direction=direction,
        operation_id=at.operation_id,
        created_at=at.created_at,
        run_id=at.run_id,
        job=at.job,
        dataset=key,
        event_time=event.event_time,
        schema=schema_of(out, dataset),
        num_rows=rows,
        num_bytes=size,
        num_files=files,
        output_types=output_types(dataset, at.sql) if is_output else 0,
    )
