"""A PySpark job that reports its lineage to Threadline through Kafka.

Run it against the local services (scripts/services.sh start):

    eval "$(scripts/services.sh env)"
    scripts/spark-jars.sh >/dev/null      # resolve the listener + kafka-clients jars once
    .venv/bin/python examples/spark/orders_report.py

or submit it (Airflow does this, see examples/airflow/) with `spark-submit`; every
`--conf` given there wins over the defaults below. Environment:

- SPARK_JARS        comma-separated jars (default: the output of scripts/spark-jars.sh)
- OPENLINEAGE_KAFKA_BOOTSTRAP  Kafka bootstrap servers (default 127.0.0.1:19092)
- OPENLINEAGE_KAFKA_TOPIC      topic Threadline consumes (default "openlineage")
- ORDERS_REPORT_DIR            where the input CSV and the Parquet output go
                               (default $TMPDIR/threadline-example)

The job writes a small orders CSV (plain Python, so it is nobody's output), then with
Spark reads it, aggregates per country and writes Parquet: one application, one SQL
job, one input and one output in Threadline.
"""

import csv
import os
import subprocess
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as f

ROOT = Path(__file__).resolve().parents[2]
ORDERS = [(1, "GB", 12.5), (2, "US", 7.0), (3, "US", 3.0), (4, "FI", 99.9), (5, "GB", 1.5)]


def spark_jars() -> str:
    """The jars from the environment, else from scripts/spark-jars.sh (cached after one run)."""
    jars = os.environ.get("SPARK_JARS")
    if jars:
        return jars
    script = ROOT / "scripts" / "spark-jars.sh"
    done = subprocess.run([script], check=True, capture_output=True, text=True)  # noqa: S603  # our own script, no input
    return done.stdout.strip()


def openlineage_settings() -> dict[str, str]:
    """Everything Spark needs to send OpenLineage events to a Kafka topic."""
    serializer = "org.apache.kafka.common.serialization.StringSerializer"
    return {
        # io.openlineage:openlineage-spark_2.12 + org.apache.kafka:kafka-clients.
        "spark.jars": spark_jars(),
        "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
        # The job namespace: the Spark application is job <namespace>/<spark.app.name>.
        "spark.openlineage.namespace": os.environ.get("OPENLINEAGE_NAMESPACE", "spark-examples"),
        "spark.openlineage.transport.type": "kafka",
        "spark.openlineage.transport.topicName": os.environ.get(
            "OPENLINEAGE_KAFKA_TOPIC", "openlineage"
        ),
        # Everything under transport.properties. goes to the Kafka producer as is.
        "spark.openlineage.transport.properties.bootstrap.servers": os.environ.get(
            "OPENLINEAGE_KAFKA_BOOTSTRAP", "127.0.0.1:19092"
        ),
        "spark.openlineage.transport.properties.key.serializer": serializer,
        "spark.openlineage.transport.properties.value.serializer": serializer,
        "spark.openlineage.transport.properties.acks": "all",
        # Spark plan facets can exceed the producer's 1 MB default request size.
        "spark.openlineage.transport.properties.max.request.size": "33554432",
        "spark.openlineage.transport.properties.compression.type": "gzip",
    }


def write_orders(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(("order_id", "country", "amount"))
        writer.writerows(ORDERS)


def main() -> None:
    work = Path(
        os.environ.get("ORDERS_REPORT_DIR", Path(tempfile.gettempdir(), "threadline-example"))
    )
    write_orders(work / "orders.csv")
    builder = SparkSession.builder.appName("orders_report").master("local[2]")
    for key, value in openlineage_settings().items():
        builder = builder.config(key, value)
    spark = builder.config("spark.ui.enabled", "false").getOrCreate()
    try:
        orders = spark.read.option("header", "true").csv(
            str(work / "orders.csv"), schema="order_id INT, country STRING, amount DOUBLE"
        )
        report = orders.groupBy("country").agg(f.sum("amount").alias("total"))
        report.write.mode("overwrite").parquet(str(work / "orders_by_country"))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
