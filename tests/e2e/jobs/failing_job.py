"""Job d: a job that fails. A write whose seventh row raises, so the Spark job aborts.

raise_error() runs inside the JVM (no Python worker), and local mode does not retry
tasks, so the failure is quick and its message is stable.
"""

from tests.e2e.jobs.names import FAILING_APP, FAILING_ERROR
from tests.e2e.jobs.session import spark_session, work_dir

APP_NAME = FAILING_APP
ERROR = FAILING_ERROR


def main() -> None:
    spark = spark_session(APP_NAME)
    try:
        rows = spark.range(0, 10).selectExpr(
            "id", f"IF(id = 7, raise_error('{ERROR}'), id * 2) AS doubled"
        )
        rows.write.mode("overwrite").parquet(str(work_dir() / "failing" / "doubled"))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
