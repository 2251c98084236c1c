"""The consumer's Kafka security settings against a real broker: SASL PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512, TLS with a client certificate (mutual TLS), and SCRAM over TLS.

Each case runs the real `threadline-consumer` with only THREADLINE__KAFKA__* security
variables set, sends one valid and one invalid event through the secured listener, and
expects the valid one in PostgreSQL and the invalid one on the dead-letter topic (so the
consumer's producer side authenticates too). Wrong credentials or an untrusted broker
certificate must ingest nothing.
"""

import asyncio
import contextlib
import json
import ssl
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from tests.faults.harness import Target, Worker, create_topics, dead_letters
from tests.faults.reference import plain_url
from tests.security.conftest import PASSWORD, USER, SecureKafka

pytestmark = pytest.mark.kafka

WAIT_S = 90.0


def _event(run_id: uuid.UUID) -> bytes:
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": datetime.now(UTC).isoformat(),
            "producer": "https://example.com/threadline-security-tests",
            "run": {"runId": str(run_id)},
            "job": {"namespace": "security", "name": "secured_job"},
            "outputs": [{"namespace": "s3://secure", "name": f"out/{run_id}"}],
        }
    ).encode()


def _cases(kafka: SecureKafka) -> dict[str, tuple[str, dict[str, str]]]:
    tls = kafka.tls
    sasl = {"SASL_USERNAME": USER, "SASL_PASSWORD": PASSWORD}
    mtls = {"SSL_CAFILE": str(tls.ca), "SSL_CERTFILE": str(tls.client_cert)}
    mtls["SSL_KEYFILE"] = str(tls.client_key)
    return {
        "sasl-plain": (
            kafka.sasl_plaintext,
            {"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "PLAIN", **sasl},
        ),
        "sasl-scram-256": (
            kafka.sasl_plaintext,
            {"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "SCRAM-SHA-256", **sasl},
        ),
        "sasl-scram-512": (
            kafka.sasl_plaintext,
            {"SECURITY_PROTOCOL": "SASL_PLAINTEXT", "SASL_MECHANISM": "SCRAM-SHA-512", **sasl},
        ),
        "mutual-tls": (kafka.ssl, {"SECURITY_PROTOCOL": "SSL", **mtls}),
        "sasl-ssl-scram-512": (
            kafka.sasl_ssl,
            {
                "SECURITY_PROTOCOL": "SASL_SSL",
                "SASL_MECHANISM": "SCRAM-SHA-512",
                "SSL_CAFILE": str(tls.ca),
                **sasl,
            },
        ),
    }


def _client_options(settings: dict[str, str]) -> dict[str, Any]:
    """The same security settings for a test-side aiokafka client."""
    options: dict[str, Any] = {"security_protocol": settings["SECURITY_PROTOCOL"]}
    if "SASL_MECHANISM" in settings:
        options["sasl_mechanism"] = settings["SASL_MECHANISM"]
        options["sasl_plain_username"] = settings["SASL_USERNAME"]
        options["sasl_plain_password"] = settings["SASL_PASSWORD"]
    if "SSL_CAFILE" in settings:
        context = ssl.create_default_context(cafile=settings["SSL_CAFILE"])
        if "SSL_CERTFILE" in settings:
            context.load_cert_chain(settings["SSL_CERTFILE"], settings["SSL_KEYFILE"])
        options["ssl_context"] = context
    return options


async def _produce(
    bootstrap: str, topic: str, values: list[bytes], options: dict[str, Any]
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=20000, **options)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value, key=b"security")
    finally:
        await producer.stop()


async def _run_rows(database_url: str, run_id: uuid.UUID) -> int:
    conn = await asyncpg.connect(plain_url(database_url))
    try:
        return int(await conn.fetchval("SELECT count(*) FROM run WHERE id = $1", run_id))
    finally:
        await conn.close()


@pytest.fixture
async def secured_topic(secure_kafka: SecureKafka) -> str:
    topic = f"secure-{uuid.uuid4().hex[:8]}"
    await create_topics(secure_kafka.plaintext, topic, partitions=2)
    return topic


def _worker(
    database_url: str, bootstrap: str, topic: str, log_dir: Path, settings: dict[str, str]
) -> Worker:
    target = Target(database_url, bootstrap, topic, f"{topic}-group", log_dir)
    env = {f"THREADLINE__KAFKA__{name}": value for name, value in settings.items()}
    return Worker(target, "consumer", env)


@pytest.mark.parametrize(
    "case", ["sasl-plain", "sasl-scram-256", "sasl-scram-512", "mutual-tls", "sasl-ssl-scram-512"]
)
@pytest.mark.timeout(240)
async def test_consumer_reads_and_dead_letters_through_a_secured_listener(
    secure_kafka: SecureKafka, secured_topic: str, database_url: str, tmp_path: Path, case: str
) -> None:
    bootstrap, settings = _cases(secure_kafka)[case]
    run_id = uuid.uuid4()
    await _produce(
        bootstrap, secured_topic, [_event(run_id), b"{not json"], _client_options(settings)
    )
    worker = _worker(database_url, bootstrap, secured_topic, tmp_path, settings)
    await worker.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while await _run_rows(database_url, run_id) == 0:
            assert worker.alive(), worker.log_tail()
            assert time.monotonic() < deadline, f"nothing ingested:\n{worker.log_tail()}"
            await asyncio.sleep(0.5)
        while await dead_letters(secure_kafka.plaintext, f"{secured_topic}.dead-letter") < 1:
            assert time.monotonic() < deadline, f"no dead letter:\n{worker.log_tail()}"
            await asyncio.sleep(0.5)
    finally:
        await worker.stop()


async def _watch(worker: Worker, seconds: float) -> None:
    """Give a misconfigured consumer `seconds` to (wrongly) ingest anything, or to exit."""
    if worker.process is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(worker.process.wait(), seconds)


def _wrong_password(kafka: SecureKafka) -> tuple[str, dict[str, str]]:
    bootstrap, settings = _cases(kafka)["sasl-scram-512"]
    return bootstrap, {**settings, "SASL_PASSWORD": "wrong-password"}


def _untrusted_broker(kafka: SecureKafka) -> tuple[str, dict[str, str]]:
    bootstrap, settings = _cases(kafka)["sasl-ssl-scram-512"]
    return bootstrap, {**settings, "SSL_CAFILE": str(kafka.tls.other_ca)}


def _no_client_certificate(kafka: SecureKafka) -> tuple[str, dict[str, str]]:
    return kafka.ssl, {"SECURITY_PROTOCOL": "SSL", "SSL_CAFILE": str(kafka.tls.ca)}


REFUSED = {
    "wrong-password": _wrong_password,
    "untrusted-broker-certificate": _untrusted_broker,
    "no-client-certificate": _no_client_certificate,
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.timeout(180)
async def test_bad_credentials_are_refused(
    secure_kafka: SecureKafka, secured_topic: str, database_url: str, tmp_path: Path, case: str
) -> None:
    bootstrap, settings = REFUSED[case](secure_kafka)
    with pytest.raises((KafkaError, ssl.SSLError, OSError)):
        async with asyncio.timeout(30):
            await _produce(bootstrap, secured_topic, [b"{}"], _client_options(settings))
    # The topic gets a valid event (sent over PLAINTEXT); a misconfigured consumer must not read it.
    run_id = uuid.uuid4()
    await _produce(secure_kafka.plaintext, secured_topic, [_event(run_id)], {})
    worker = _worker(database_url, bootstrap, secured_topic, tmp_path, settings)
    await worker.start()
    try:
        await _watch(worker, 20)
        assert await _run_rows(database_url, run_id) == 0
    finally:
        await worker.stop()
    # Fail fast: a consumer that cannot authenticate exits non-zero (its supervisor restarts
    # it and alerts), with the cause in its log, instead of idling as if all were well.
    assert worker.process is not None
    assert worker.process.returncode not in (None, 0), worker.log_tail()
    assert "Unable" in worker.log_tail(20000), worker.log_tail()
