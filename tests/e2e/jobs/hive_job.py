"""Job b: a Hive-enabled session (embedded Derby metastore) with managed tables.

Creates a managed table, appends to it, overwrites it, reads it back into a second
table (CTAS) and reads that one back to the driver. The listener reports each table
as its warehouse path with a TABLE symlink to the metastore name.
"""

from tests.e2e.jobs.names import HIVE_APP, HIVE_DATABASE
from tests.e2e.jobs.session import spark_session

APP_NAME = HIVE_APP
# The literal database name is HIVE_DATABASE (plain strings: no SQL built from variables).
STATEMENTS = (
    "CREATE DATABASE IF NOT EXISTS e2e_shop",
    "CREATE TABLE e2e_shop.sales (sale_id INT, region STRING, amount DOUBLE) USING parquet",
    "INSERT INTO e2e_shop.sales VALUES (1, 'north', 10.0), (2, 'south', 5.5)",
    "INSERT OVERWRITE TABLE e2e_shop.sales VALUES "
    "(1, 'north', 10.0), (2, 'south', 5.5), (3, 'north', 2.5), (4, 'east', 1.0)",
    "CREATE TABLE e2e_shop.sales_by_region USING parquet AS "
    "SELECT region, count(*) AS sales, sum(amount) AS amount FROM e2e_shop.sales GROUP BY region",
)


def main() -> None:
    spark = spark_session(APP_NAME, hive=True)
    try:
        for statement in STATEMENTS:
            spark.sql(statement)
        rows = spark.table(f"{HIVE_DATABASE}.sales_by_region").collect()
        if len(rows) != 3:
            raise SystemExit(f"expected 3 regions, read back {rows}")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
