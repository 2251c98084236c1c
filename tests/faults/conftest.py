"""Fault-tier fixtures: private Kafka + PostgreSQL, the event stream and its reference database.

Sizes are set by env vars so CI and a developer can trade coverage for time:
THREADLINE_FAULT_EVENTS (events per scenario, default 50,000; fewer on a slow machine) and
THREADLINE_FAULT_PORTS ("kafka,controller,postgres", default "29092,29093,56432").
"""

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.dump import dump
from tests.faults.events import Message, stream
from tests.faults.harness import Target, create_topics
from tests.faults.private import ROOT, PrivateServices
from tests.faults.reference import Reference, ingest_once, new_database, plain_url
from tests.faults.report import Report

EVENTS = int(os.environ.get("THREADLINE_FAULT_EVENTS", "50000"))
PORTS = [int(p) for p in os.environ.get("THREADLINE_FAULT_PORTS", "29092,29093,56432").split(",")]


@pytest.fixture(scope="session")
def fault_services() -> Iterator[PrivateServices]:
    """Our own broker and database: the scenarios kill and restart them."""
    kafka_port, controller_port, pg_port = PORTS
    private = PrivateServices("faults", kafka_port, controller_port, pg_port)
    try:
        private.start()
        yield private
    finally:
        private.destroy()


@pytest.fixture(scope="session")
def fault_events() -> list[Message]:
    return stream(EVENTS)


@pytest.fixture(scope="session")
async def reference(fault_services: PrivateServices, fault_events: list[Message]) -> Reference:
    url = await asyncio.to_thread(new_database, fault_services, "reference")
    seconds = await ingest_once(url, fault_events)
    return Reference(await dump(plain_url(url)), seconds)


@pytest.fixture
async def target(
    fault_services: PrivateServices, tmp_path: Path, request: pytest.FixtureRequest
) -> Target:
    """A fresh database, topic pair and consumer group for one scenario."""
    name = request.node.name.removeprefix("test_")[:24]
    url = await asyncio.to_thread(new_database, fault_services, name)
    topic = f"faults-{name}-{uuid.uuid4().hex[:6]}"
    await create_topics(fault_services.kafka_bootstrap, topic)
    return Target(url, fault_services.kafka_bootstrap, topic, f"{topic}-group", tmp_path)


@pytest.fixture(scope="session")
def report() -> Report:
    return Report(ROOT / "build" / "reliability" / "faults.jsonl")
