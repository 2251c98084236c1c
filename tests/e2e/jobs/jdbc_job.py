"""Job c: JDBC write to and read from PostgreSQL, the server named by the host in the URL.

`python -m tests.e2e.jobs.jdbc_job <mode>` with THREADLINE_E2E_JDBC_URL
(jdbc:postgresql://HOST:PORT/DB), THREADLINE_E2E_JDBC_USER and THREADLINE_E2E_JDBC_PASSWORD:

- `load`:   an in-memory frame -> public.orders (overwrite), then public.orders ->
            aggregate -> public.order_totals (overwrite)
- `export`: public.orders -> filter -> public.big_orders (append)

The test runs `load` against localhost and `export` against 127.0.0.1: one server, so
both jobs must meet at the same public.orders dataset.
"""

import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as f

from tests.e2e.jobs.names import JDBC_APP_PREFIX
from tests.e2e.jobs.session import env, spark_session

ORDERS = [(1, "ada", 12.5), (2, "grace", 7.0), (3, "grace", 3.0), (4, "linus", 99.9)]


def options(name: str) -> dict[str, str]:
    return {
        "url": env("THREADLINE_E2E_JDBC_URL"),
        "user": env("THREADLINE_E2E_JDBC_USER"),
        "password": env("THREADLINE_E2E_JDBC_PASSWORD"),
        "dbtable": name,
        # The driver jar comes with spark.jars (a child class loader): java.sql.DriverManager
        # only finds it when Spark registers it by class name.
        "driver": "org.postgresql.Driver",
    }


def table(spark: SparkSession, name: str) -> DataFrame:
    return spark.read.format("jdbc").options(**options(name)).load()


def save(frame: DataFrame, name: str, mode: str) -> None:
    frame.write.format("jdbc").options(**options(name)).mode(mode).save()


def load(spark: SparkSession) -> None:
    orders = spark.createDataFrame(ORDERS, "order_id INT, customer STRING, amount DOUBLE")
    save(orders, "public.orders", "overwrite")
    totals = table(spark, "public.orders").groupBy("customer").agg(f.sum("amount").alias("total"))
    save(totals, "public.order_totals", "overwrite")


def export(spark: SparkSession) -> None:
    save(table(spark, "public.orders").where(f.col("amount") > 10), "public.big_orders", "append")


MODES = {"load": load, "export": export}


def main() -> None:
    mode = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if mode not in MODES:
        raise SystemExit(f"usage: python -m tests.e2e.jobs.jdbc_job {{{'|'.join(MODES)}}}")
    spark = spark_session(f"{JDBC_APP_PREFIX}{mode}")
    try:
        MODES[mode](spark)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
