"""Dataset format: the storage facet's file format (else storage layer); the greatest wins."""

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

from consumer.extract.datasets import MAX_FORMAT_LENGTH, dataset_format
from tests.corpus import CORPUS, edited, extracted, payloads_of

pytestmark = pytest.mark.unit

RENTGEN = "data-rentgen/events_spark.jsonl"  # its COMPLETE writes a ClickHouse table
OUTPUT = ("clickhouse", "localhost:8123", "mydb.myschema.mytable")
# The real listener's storage facet of an Iceberg table (a partial expected-output file).
ICEBERG_FILE = Path("openlineage-spark-partial/pysparkWriteIcebergTableVersionEnd.json")


def iceberg_storage_facet() -> Any:
    doc = orjson.loads((CORPUS / ICEBERG_FILE).read_bytes())
    return doc["outputs"][0]["facets"]["storage"]


@pytest.mark.parametrize(
    ("storage", "expected"),
    [
        (iceberg_storage_facet(), "parquet"),  # fileFormat before storageLayer
        ({"storageLayer": "Delta"}, "delta"),
        ({"fileFormat": " ORC "}, "orc"),
        ({"fileFormat": "", "storageLayer": "iceberg"}, "iceberg"),
        ({"fileFormat": "x" * (MAX_FORMAT_LENGTH + 1)}, None),  # free text, not a format
        ({"fileFormat": None}, None),
        ("parquet", None),  # a malformed facet is ignored, never an error
        (None, None),
    ],
)
def test_format_from_the_storage_facet(storage: Any, expected: str | None) -> None:
    facets = {} if storage is None else {"storage": storage}
    assert dataset_format({"namespace": "s3://b", "name": "t", "facets": facets}) == expected


def with_output_format(payload: bytes, storage: dict[str, str]) -> bytes:
    def change(doc: dict[str, Any]) -> None:
        doc["outputs"][0].setdefault("facets", {})["storage"] = storage

    return edited(payload, change)


def test_the_output_dataset_record_carries_its_format() -> None:
    complete = payloads_of(RENTGEN)[3]
    out = extracted(with_output_format(complete, iceberg_storage_facet()))
    formats = {d.key: d.format for d in out.datasets}
    assert formats[OUTPUT] == "parquet"
    assert {f for key, f in formats.items() if key != OUTPUT} == {None}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_the_greatest_format_wins_in_any_order(order: tuple[int, ...]) -> None:
    complete = payloads_of(RENTGEN)[3]
    events = [
        with_output_format(complete, {"fileFormat": "orc"}),
        with_output_format(complete, {"fileFormat": "parquet"}),
        complete,  # no storage facet: never erases a format
    ]
    out = extracted(*(events[i] for i in order))
    assert {d.key: d.format for d in out.datasets}[OUTPUT] == "parquet"
