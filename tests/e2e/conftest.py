"""e2e tier: real PySpark with the real OpenLineage listener -> Kafka -> consumer -> API.

Per test module: a fresh migrated database, a fresh topic, the consumer app running
in-process on them *before* any producer starts, and an API client reading that database
through the read-only role, as deployed. Each module runs its Spark job(s) once in a
module-scoped fixture (one Spark application per job process) and its tests assert the
resulting lineage through the API.

Needs, besides the services: `scripts/install-e2e.sh` (pyspark in .venv, Airflow in its own
virtualenv, the Spark jars). Anything missing fails with a one-line message, never skips.
"""

import importlib.util
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from consumer.app import create_app as create_consumer
from consumer.settings import ConsumerSettings, KafkaSettings, MetricsSettings
from server.app import create_app as create_server
from server.settings import ServerSettings
from shared.settings import DatabaseSettings
from tests.conftest import create_database, drop_database, with_credentials
from tests.e2e.api import Api
from tests.e2e.harness import ROOT, SPARK_CONF_DIR, Pipeline, create_topics, delete_topics
from tests.services import Services

INSTALL = "run scripts/install-e2e.sh (after scripts/install.sh)"
# The job namespace of every Spark application the e2e jobs start.
NAMESPACE = "threadline-e2e"


@pytest.fixture(scope="session")
def spark_jars() -> str:
    """Comma-separated listener + kafka-clients + JDBC jars (resolved once, then cached)."""
    if importlib.util.find_spec("pyspark") is None:
        pytest.fail(f"pyspark is not installed in {sys.prefix}: {INSTALL}", pytrace=False)
    done = subprocess.run(
        [ROOT / "scripts" / "spark-jars.sh"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"scripts/spark-jars.sh failed: {done.stderr[-2000:]}", pytrace=False)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def module_database(test_services: Services, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh migrated database for this module's pipeline (owner URL)."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    name = f"threadline_e2e_{module}_{uuid.uuid4().hex[:8]}"
    yield create_database(test_services, name)
    drop_database(test_services, name)


def consumer_settings(database_url: str, bootstrap: str, topic: str) -> ConsumerSettings:
    return ConsumerSettings(
        database=DatabaseSettings(url=SecretStr(database_url)),
        kafka=KafkaSettings(
            bootstrap_servers=bootstrap,
            topic=topic,
            group_id=f"{topic}-group",
            dead_letter_topic=f"{topic}.dead-letter",
            batch_timeout_ms=200,
        ),
        metrics=MetricsSettings(port=0),
    )


def reader_settings(database_url: str, services: Services) -> ServerSettings:
    """The API as deployed: the read-only role when the services provide one."""
    url = database_url
    if services.reader_user:
        url = with_credentials(database_url, services.reader_user, services.reader_password)
    return ServerSettings(
        database=DatabaseSettings(url=SecretStr(url), pool_size=2, max_overflow=2)
    )


def job_env(pipeline_topic: str, bootstrap: str, work: Path, jars: str) -> dict[str, str]:
    """Environment of a Spark job process (see tests/e2e/jobs/session.py)."""
    return {
        **os.environ,
        "THREADLINE_E2E_JARS": jars,
        "THREADLINE_E2E_BOOTSTRAP": bootstrap,
        "THREADLINE_E2E_TOPIC": pipeline_topic,
        "THREADLINE_E2E_NAMESPACE": NAMESPACE,
        "THREADLINE_E2E_WORK": str(work),
        "SPARK_CONF_DIR": str(SPARK_CONF_DIR),
        # The machine's hostname may resolve to a non-loopback address; stay on loopback.
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


@pytest.fixture(scope="module")
async def pipeline(
    module_database: str,
    test_services: Services,
    spark_jars: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Pipeline]:
    """Topic + running consumer + API over this module's database."""
    bootstrap = test_services.kafka_bootstrap
    topic = f"e2e-openlineage-{uuid.uuid4().hex[:10]}"
    await create_topics(bootstrap, topic)
    work = tmp_path_factory.mktemp("e2e")
    consumer = create_consumer(consumer_settings(module_database, bootstrap, topic))
    await consumer.start()
    server = create_server(reader_settings(module_database, test_services))
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=server), base_url="http://threadline.e2e"
        ) as client:
            yield Pipeline(
                bootstrap=bootstrap,
                topic=topic,
                group_id=f"{topic}-group",
                namespace=NAMESPACE,
                work=work,
                job_env=job_env(topic, bootstrap, work, spark_jars),
                api=client,
            )
    finally:
        await consumer.stop()
        await server.state.databases.dispose()
        await delete_topics(bootstrap, topic)


@pytest.fixture(scope="module")
def api(pipeline: Pipeline) -> Api:
    return Api(pipeline.api)
