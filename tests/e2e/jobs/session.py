"""The SparkSession every e2e job uses: local mode, the OpenLineage listener, Kafka transport.

Jobs run as their own processes (`python -m tests.e2e.jobs.<name>`), one Spark application
each, configured by the environment the test gives them:

- THREADLINE_E2E_JARS       comma-separated jars (scripts/spark-jars.sh output)
- THREADLINE_E2E_BOOTSTRAP  Kafka bootstrap servers
- THREADLINE_E2E_TOPIC      topic the listener sends events to
- THREADLINE_E2E_NAMESPACE  OpenLineage job namespace of the application
- THREADLINE_E2E_WORK       scratch directory (data files, warehouse, metastore)

Local-mode tuning (master, shuffle partitions, UI off, driver memory) and logging come
from tests/e2e/spark-conf, the SPARK_CONF_DIR the tests set.
"""

import os
from pathlib import Path

from pyspark.sql import SparkSession

LISTENER = "io.openlineage.spark.agent.OpenLineageSparkListener"
STRING_SERIALIZER = "org.apache.kafka.common.serialization.StringSerializer"


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set (the e2e tests set it; see tests/e2e/conftest.py)")
    return value


def work_dir() -> Path:
    return Path(env("THREADLINE_E2E_WORK"))


def openlineage_conf() -> dict[str, str]:
    """The listener and its Kafka transport (the settings examples/ documents)."""
    return {
        "spark.jars": env("THREADLINE_E2E_JARS"),
        "spark.extraListeners": LISTENER,
        "spark.openlineage.namespace": env("THREADLINE_E2E_NAMESPACE"),
        "spark.openlineage.transport.type": "kafka",
        "spark.openlineage.transport.topicName": env("THREADLINE_E2E_TOPIC"),
        "spark.openlineage.transport.properties.bootstrap.servers": env("THREADLINE_E2E_BOOTSTRAP"),
        "spark.openlineage.transport.properties.key.serializer": STRING_SERIALIZER,
        "spark.openlineage.transport.properties.value.serializer": STRING_SERIALIZER,
        "spark.openlineage.transport.properties.acks": "all",
        # Spark plan facets can exceed the producer's 1 MB default; the topic allows 32 MiB.
        "spark.openlineage.transport.properties.max.request.size": "33554432",
        "spark.openlineage.transport.properties.compression.type": "gzip",
    }


def hive_conf() -> dict[str, str]:
    """A Hive-enabled session on an embedded Derby metastore inside the scratch directory."""
    work = work_dir()
    metastore = work / "metastore_db"
    return {
        "spark.sql.warehouse.dir": str(work / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore};create=true"
        ),
        # Derby writes derby.log into its system home (default: the working directory).
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={work}",
    }


def spark_session(app_name: str, *, hive: bool = False) -> SparkSession:
    conf = {**openlineage_conf(), **(hive_conf() if hive else {})}
    builder = SparkSession.builder.appName(app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    if hive:
        builder = builder.enableHiveSupport()
    return builder.getOrCreate()
