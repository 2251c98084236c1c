"""Job a: CSV and Parquet in, join and aggregate, Parquet out (two SQL executions).

1. orders.csv -> orders/ (Parquet)
2. customers.csv + orders/ -> join, group by country -> customer_totals/ (Parquet, overwrite)

The CSV inputs are written with the standard library first, so they are nobody's output.
"""

import csv
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import functions as f

from tests.e2e.jobs.names import FILES_APP
from tests.e2e.jobs.session import spark_session, work_dir

APP_NAME = FILES_APP
CUSTOMERS = [(1, "Ada", "GB"), (2, "Grace", "US"), (3, "Linus", "FI"), (4, "Margaret", "US")]
CUSTOMERS_SCHEMA = "customer_id INT, name STRING, country STRING"
ORDERS_SCHEMA = "order_id INT, customer_id INT, amount DOUBLE"
ORDERS = [(10, 1, 12.5), (11, 2, 7.0), (12, 2, 3.0), (13, 3, 99.9), (14, 4, 1.0), (15, 1, 2.5)]


def write_csv(path: Path, header: tuple[str, ...], rows: Sequence[tuple[object, ...]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def main() -> None:
    data = work_dir() / "files"
    write_csv(data / "raw" / "customers.csv", ("customer_id", "name", "country"), CUSTOMERS)
    write_csv(data / "raw" / "orders.csv", ("order_id", "customer_id", "amount"), ORDERS)
    spark = spark_session(APP_NAME)
    try:
        # Explicit schemas: inferring them runs extra Spark jobs (CSV sampling, Parquet
        # footers) that the listener reports as RDD jobs with a START and no end.
        read_csv = spark.read.option("header", "true").csv
        orders = read_csv(str(data / "raw" / "orders.csv"), schema=ORDERS_SCHEMA)
        orders.write.mode("overwrite").parquet(str(data / "lake" / "orders"))
        customers = read_csv(str(data / "raw" / "customers.csv"), schema=CUSTOMERS_SCHEMA)
        totals = (
            spark.read.schema(ORDERS_SCHEMA)
            .parquet(str(data / "lake" / "orders"))
            .join(customers, "customer_id")
            .groupBy("country")
            .agg(f.count("order_id").alias("orders"), f.sum("amount").alias("total"))
        )
        totals.write.mode("overwrite").parquet(str(data / "lake" / "customer_totals"))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
