"""The catalogue tests' world, as OpenLineage events ingested through the consumer pipeline.

    cat_ingest (generic)      writes shop.public.orders (two schema versions)
    cat_orders (Airflow DAG)  run D
      cat_orders.load         try 1 FAILED, try 2 SUCCEEDED (same DAG run)
      cat_orders.transform    run T launches Spark application cat_orders_etl (run S):
        SQL job A  reads shop.public.orders, writes the path under Hive sales.orders_daily
        SQL job B  reads sales.orders_daily, writes reports.orders_summary
    cat_report_reader (Spark) reads reports.orders_summary, writes an archive path
    cat_cleanup               KILLED;  cat_streaming  still running
    cat_declared (JobEvent)   declares customers -> orders_daily_archive

Names start with `cat` so that other suites' data in the same database stays apart.
"""

from tests.server.events import (
    GENERIC,
    T0,
    DagRun,
    SparkApp,
    SqlJob,
    TaskRun,
    airflow_dag_run,
    airflow_spark_chain,
    airflow_task_run,
    dataset,
    hours,
    job_event,
    run_event,
    spark_application,
    uuid7,
)

HDFS = "hdfs://cat-nn1.example:8020"
HIVE = "hive://cat-metastore.example:9083"
PG = "postgres://cat-db.example:5432"
AIRFLOW_NS = "cat-airflow"
SPARK_NS = "cat-spark"
GENERIC_NS = "cat-jobs"

ORDERS = "shop.public.orders"
CUSTOMERS = "shop.public.customers"
ORDER_ITEMS = "shop.public.order_items"
ORDERS_DAILY = "sales.orders_daily"
ORDERS_DAILY_PATH = "/warehouse/sales.db/orders_daily"
SUMMARY = "reports.orders_summary"
ARCHIVE = "/archive/orders_daily_archive"

INGEST_1 = uuid7(T0, 1)
INGEST_2 = uuid7(T0 + hours(24), 2)
DAG_RUN = uuid7(T0 + hours(25), 3)
LOAD_TRY_1 = uuid7(T0 + hours(25.1), 4)
LOAD_TRY_2 = uuid7(T0 + hours(25.2), 5)
TRANSFORM = uuid7(T0 + hours(25.5), 6)
SPARK_APP = uuid7(T0 + hours(25.6), 7)
SQL_A = uuid7(T0 + hours(25.7), 8)
SQL_B = uuid7(T0 + hours(25.8), 9)
READER = uuid7(T0 + hours(27), 10)
READER_SQL = uuid7(T0 + hours(27.1), 11)
CLEANUP = uuid7(T0 + hours(28), 12)
STREAMING = uuid7(T0 + hours(29), 13)

APP_ID = "application_1717400000000_0001"
DAG_RUN_ID = "scheduled__2024-06-04T07:00:00+00:00"
LOAD_ERROR = "psycopg2.OperationalError: could not connect to server"


def _ingest() -> list[bytes]:
    job = (GENERIC_NS, "cat_ingest")
    first = dataset(PG, ORDERS, fields=["id", "amount"], stats=(1000, 64_000, 1), output=True)
    second = dataset(
        PG, ORDERS, fields=["id", "amount", "currency"], stats=(1100, 70_000, 1), output=True
    )
    return [
        run_event("START", T0, INGEST_1, job),
        run_event("COMPLETE", T0 + hours(0.5), INGEST_1, job, outputs=[first]),
        run_event("START", T0 + hours(24), INGEST_2, job),
        run_event("COMPLETE", T0 + hours(24.5), INGEST_2, job, outputs=[second]),
    ]


DAG = DagRun(AIRFLOW_NS, "cat_orders", DAG_RUN, T0 + hours(25), T0 + hours(27), DAG_RUN_ID)


def _load_tries() -> list[bytes]:
    first = TaskRun(
        DAG, "load", LOAD_TRY_1, T0 + hours(25.1), T0 + hours(25.15), 1, "FAIL", LOAD_ERROR
    )
    second = TaskRun(DAG, "load", LOAD_TRY_2, T0 + hours(25.2), T0 + hours(25.3), 2)
    return airflow_task_run(first) + airflow_task_run(second)


def _sql_jobs() -> list[SqlJob]:
    read_orders = dataset(PG, ORDERS, fields=["id", "amount", "currency"], stats=(1100, 70_000, 1))
    columns = {
        "order_id": [(PG, ORDERS, "id", "DIRECT")],
        "total": [(PG, ORDERS, "amount", "DIRECT"), (PG, ORDERS, "currency", "INDIRECT")],
    }
    daily_path = dataset(
        HDFS,
        ORDERS_DAILY_PATH,
        fields=["order_id", "total"],
        table=(HIVE, ORDERS_DAILY),
        stats=(900, 48_000, 4),
        output=True,
        columns=columns,
        lifecycle="OVERWRITE",
    )
    daily_table = dataset(HIVE, ORDERS_DAILY, fields=["order_id", "total"])
    summary = dataset(
        HIVE,
        SUMMARY,
        fields=["day", "total"],
        stats=(1, 100, 1),
        output=True,
        file_format="Parquet",
    )
    return [
        SqlJob(
            SQL_A,
            "orders_daily",
            T0 + hours(25.7),
            T0 + hours(25.75),
            0,
            inputs=[read_orders],
            outputs=[daily_path],
        ),
        SqlJob(
            SQL_B,
            "orders_summary",
            T0 + hours(25.8),
            T0 + hours(25.85),
            1,
            inputs=[daily_table],
            outputs=[summary],
            sql="INSERT INTO reports.orders_summary SELECT ...",
        ),
    ]


TRANSFORM_TASK = TaskRun(DAG, "transform", TRANSFORM, T0 + hours(25.5), T0 + hours(26))
ETL = SparkApp(
    SPARK_NS,
    "cat_orders_etl",
    SPARK_APP,
    T0 + hours(25.6),
    T0 + hours(25.9),
    APP_ID,
    user="etl-bot",
    sql_jobs=_sql_jobs(),
    parent=TRANSFORM_TASK.parent_of_children,
)


def _reader() -> list[bytes]:
    job = SqlJob(
        READER_SQL,
        "archive",
        T0 + hours(27.1),
        T0 + hours(27.2),
        0,
        inputs=[dataset(HIVE, SUMMARY)],
        outputs=[dataset(HDFS, ARCHIVE, output=True)],
    )
    app = SparkApp(
        SPARK_NS,
        "cat_report_reader",
        READER,
        T0 + hours(27),
        T0 + hours(27.3),
        "application_1717400000000_0002",
        sql_jobs=[job],
    )
    return spark_application(app)


def _others() -> list[bytes]:
    cleanup = (GENERIC_NS, "cat_cleanup")
    streaming = (GENERIC_NS, "cat_streaming")
    declared = job_event(
        T0 + hours(30),
        (GENERIC_NS, "cat_declared"),
        inputs=[dataset(PG, CUSTOMERS)],
        outputs=[dataset(HDFS, ARCHIVE)],
    )
    decoy = run_event(
        "COMPLETE",
        T0 + hours(31),
        uuid7(T0 + hours(31), 14),
        (GENERIC_NS, "cat_items"),
        producer=GENERIC,
        inputs=[dataset(PG, ORDER_ITEMS)],
    )
    return [
        run_event("START", T0 + hours(28), CLEANUP, cleanup),
        run_event("ABORT", T0 + hours(28.5), CLEANUP, cleanup),
        run_event("START", T0 + hours(29), STREAMING, streaming),
        declared,
        decoy,
    ]


def world_batches() -> list[list[bytes]]:
    """Batches in arrival order (the consumer handles any order; this one reads naturally)."""
    dag_start, dag_end = airflow_dag_run(DAG)
    chain = airflow_spark_chain(DAG, TRANSFORM_TASK, ETL)
    chain = [e for e in chain if e not in (dag_start, dag_end)]
    return [_ingest(), [dag_start, *_load_tries(), *chain, dag_end], _reader(), _others()]
