"""Where the test services are: env vars from scripts/services.sh, else testcontainers.

A missing service is a one-line failure saying how to start it, never a skip:
CI must not go green by skipping a tier.
"""

import os
import socket
from dataclasses import dataclass
from functools import cache

import pytest

HOW_TO_START = 'start them with: eval "$(scripts/services.sh start)"'


@dataclass(frozen=True, slots=True)
class Services:
    pg_admin_url: str  # postgresql://... to the maintenance database, may CREATE DATABASE
    kafka_bootstrap: str
    reader_user: str
    reader_password: str


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env().ping()
    except Exception:
        return False
    return True


def _from_testcontainers() -> Services:  # pragma: no cover - no Docker engine on our machines
    from testcontainers.kafka import KafkaContainer
    from testcontainers.postgres import PostgresContainer

    pg = PostgresContainer("postgres:15", username="threadline", password="threadline")
    pg.start()
    kafka = KafkaContainer().with_kraft()
    kafka.start()
    url = pg.get_connection_url().replace("+psycopg2", "")
    return Services(url.rsplit("/", 1)[0] + "/postgres", kafka.get_bootstrap_server(), "", "")


@cache
def services() -> Services:
    admin = os.environ.get("THREADLINE_SERVICES_PG_ADMIN_URL")
    kafka = os.environ.get("THREADLINE__KAFKA__BOOTSTRAP_SERVERS")
    if admin and kafka:
        return Services(
            pg_admin_url=admin,
            kafka_bootstrap=kafka,
            reader_user=os.environ.get("THREADLINE_SERVICES_READER_USER", ""),
            reader_password=os.environ.get("THREADLINE_SERVICES_READER_PASSWORD", ""),
        )
    if _docker_answers():
        return _from_testcontainers()
    pytest.fail(f"PostgreSQL/Kafka test services are not configured; {HOW_TO_START}", pytrace=False)


def port_open(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0
