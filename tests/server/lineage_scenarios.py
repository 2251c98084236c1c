"""The event sets lineage tests ingest, and the names their ids are looked up by.

Every scenario lives in its own namespaces, so the graphs never touch each other
or data other test modules write into the same database.
"""

from datetime import timedelta
from uuid import UUID

from tests.server.lineage_events import (
    AIRFLOW,
    SPARK,
    T0,
    Columns,
    Json,
    airflow_type,
    dataset,
    minutes,
    run_event,
    spark_type,
    uuid7,
)

HDFS = "hdfs://lin-nn:8020"
HIVE = "hive://lin-metastore:9083"
PG = "postgres://lin-db:5432"

# --- Airflow DAG -> task -> Spark application with two SQL operations ------------------
DAG_JOB = ("lin-airflow", "sales_dag")
TASK_JOB = ("lin-airflow", "sales_dag.run_spark")
APP_JOB = ("lin-spark", "sales_app")
DAG_RUN = uuid7(T0, 1)
TASK_RUN = uuid7(T0 + minutes(1), 2)
APP_RUN = uuid7(T0 + minutes(2), 3)
OP1 = uuid7(T0 + minutes(3), 4)
OP2 = uuid7(T0 + minutes(5), 5)
RAW_PATH, RAW_TABLE = "/warehouse/lin/raw_orders", "lin.raw_orders"
CLEAN_PATH, CLEAN_TABLE = "/warehouse/lin/orders_clean", "lin.orders_clean"
DAILY = "mart.public.daily_sales"
FIELDS = ["id", "amount", "ts"]


def _raw() -> Json:
    return dataset(HDFS, RAW_PATH, table=(HIVE, RAW_TABLE), fields=FIELDS, stats=(120, 1200, 3))


def _clean_in() -> Json:
    return dataset(HDFS, CLEAN_PATH, table=(HIVE, CLEAN_TABLE), fields=FIELDS, stats=(100, 1000, 2))


def _clean_out() -> Json:
    return dataset(
        HDFS,
        CLEAN_PATH,
        table=(HIVE, CLEAN_TABLE),
        fields=FIELDS,
        stats=(100, 1000, 2),
        output=True,
        lifecycle="OVERWRITE",
    )


def _daily() -> Json:
    # Spec 1-0 style (no transformations): both read as DIRECT.
    columns: Columns = {
        "day": [(HDFS, CLEAN_PATH, "ts", None)],
        "total": [(HDFS, CLEAN_PATH, "amount", None)],
    }
    stats = (10, 200, 1)
    return dataset(PG, DAILY, fields=["day", "total"], stats=stats, output=True, columns=columns)


def _spark_operation(op: UUID, start: int, name: str, inputs: Json, output: Json) -> list[bytes]:
    job = (APP_JOB[0], f"{APP_JOB[1]}.{name}")
    kind, parent = spark_type("SQL_JOB"), (APP_RUN, *APP_JOB)
    at = T0 + minutes(start)
    return [
        run_event("START", at, op, job, producer=SPARK, job_type=kind, parent=parent),
        run_event(
            "COMPLETE",
            at + minutes(1),
            op,
            job,
            producer=SPARK,
            job_type=kind,
            parent=parent,
            inputs=[inputs],
            outputs=[output],
        ),
    ]


def _airflow() -> list[bytes]:
    dag_kind, task_kind = airflow_type("DAG"), airflow_type("TASK")
    dag_facets = {"airflowDagRun": {"dagRun": {"run_id": "scheduled__2024-05-01"}}}
    task_facets = {
        "airflow": {
            "taskInstance": {"try_number": 1},
            "dagRun": {"run_id": "scheduled__2024-05-01"},
        }
    }
    task_parent = (DAG_RUN, *DAG_JOB)
    return [
        run_event("START", T0, DAG_RUN, DAG_JOB, producer=AIRFLOW, job_type=dag_kind),
        run_event(
            "START",
            T0 + minutes(1),
            TASK_RUN,
            TASK_JOB,
            producer=AIRFLOW,
            job_type=task_kind,
            parent=task_parent,
            run_facets=task_facets,
        ),
        run_event(
            "COMPLETE",
            T0 + minutes(20),
            TASK_RUN,
            TASK_JOB,
            producer=AIRFLOW,
            job_type=task_kind,
            parent=task_parent,
            run_facets=task_facets,
        ),
        run_event(
            "COMPLETE",
            T0 + minutes(30),
            DAG_RUN,
            DAG_JOB,
            producer=AIRFLOW,
            job_type=dag_kind,
            run_facets=dag_facets,
        ),
    ]


def _spark_app() -> list[bytes]:
    kind, parent = spark_type("APPLICATION"), (TASK_RUN, *TASK_JOB)
    details = {"spark_applicationDetails": {"applicationId": "application_1_0001"}}
    return [
        run_event(
            "START",
            T0 + minutes(2),
            APP_RUN,
            APP_JOB,
            producer=SPARK,
            job_type=kind,
            parent=parent,
            run_facets=details,
        ),
        *_spark_operation(OP1, 3, "insert_orders_clean", _raw(), _clean_out()),
        *_spark_operation(OP2, 5, "insert_daily_sales", _clean_in(), _daily()),
        run_event(
            "COMPLETE",
            T0 + minutes(15),
            APP_RUN,
            APP_JOB,
            producer=SPARK,
            job_type=kind,
            parent=parent,
            run_facets=details,
        ),
    ]


def spark_chain() -> list[bytes]:
    return [*_airflow(), *_spark_app()]


# --- A cycle: a -> job1 -> b -> job2 -> a -------------------------------------------------
CYCLE_NS = "postgres://lin-cycle:5432"
CYCLE_A, CYCLE_B = "cyc.public.a", "cyc.public.b"
CYCLE_RUN1 = uuid7(T0 + timedelta(hours=1), 11)
CYCLE_RUN2 = uuid7(T0 + timedelta(hours=2), 12)


def cycle() -> list[bytes]:
    a, b = dataset(CYCLE_NS, CYCLE_A), dataset(CYCLE_NS, CYCLE_B)
    at1, at2 = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
    return [
        run_event("COMPLETE", at1, CYCLE_RUN1, ("lin-cycle", "job1"), inputs=[a], outputs=[b]),
        run_event("COMPLETE", at2, CYCLE_RUN2, ("lin-cycle", "job2"), inputs=[b], outputs=[a]),
    ]


# --- A fan-out: one run writes 30 tables --------------------------------------------------
FAN_NS = "postgres://lin-fan:5432"
FAN_SOURCE = "fan.public.src"
FAN_RUN = uuid7(T0 + timedelta(hours=3), 21)
FAN_WIDTH = 30


def fan_out() -> list[bytes]:
    outputs = [dataset(FAN_NS, f"fan.public.t{i:02d}") for i in range(FAN_WIDTH)]
    at = T0 + timedelta(hours=3)
    job = ("lin-fan", "fanout")
    return [
        run_event(
            "COMPLETE", at, FAN_RUN, job, inputs=[dataset(FAN_NS, FAN_SOURCE)], outputs=outputs
        )
    ]


# --- One daily job over three days (time windows) -----------------------------------------
WIN_NS = "postgres://lin-window:5432"
WIN_SRC, WIN_DST = "win.public.src", "win.public.dst"
WIN_DAYS = [T0 + timedelta(days=d) for d in (1, 2, 3)]
WIN_RUNS = [uuid7(day, 30 + i) for i, day in enumerate(WIN_DAYS)]


def daily_runs() -> list[bytes]:
    events = []
    for k, (day, run) in enumerate(zip(WIN_DAYS, WIN_RUNS, strict=True), start=1):
        src = dataset(WIN_NS, WIN_SRC, stats=(10 * k, 100 * k, 1))
        dst = dataset(WIN_NS, WIN_DST, stats=(100 * k, 1000 * k, k), output=True)
        job = ("lin-window", "daily_copy")
        events.append(run_event("START", day, run, job, inputs=[src]))
        events.append(
            run_event("COMPLETE", day + minutes(10), run, job, inputs=[src], outputs=[dst])
        )
    return events


# --- A path written without a symlink, read back as its Hive table -------------------------
SYM_NS = "postgres://lin-sym:5432"
SYM_SOURCE, SYM_REPORT = "sym.public.source", "sym.public.report"
EVENTS_PATH, EVENTS_TABLE = "/warehouse/lin/events", "lin.events"
SYM_WRITER = uuid7(T0 + timedelta(hours=4), 41)
SYM_READER = uuid7(T0 + timedelta(hours=5), 42)


def symlinked() -> list[bytes]:
    path_out = dataset(HDFS, EVENTS_PATH, output=True)
    table_in = dataset(HDFS, EVENTS_PATH, table=(HIVE, EVENTS_TABLE))
    at_w, at_r = T0 + timedelta(hours=4), T0 + timedelta(hours=5)
    return [
        run_event(
            "COMPLETE",
            at_w,
            SYM_WRITER,
            ("lin-sym", "writer"),
            inputs=[dataset(SYM_NS, SYM_SOURCE)],
            outputs=[path_out],
        ),
        run_event(
            "COMPLETE",
            at_r,
            SYM_READER,
            ("lin-sym", "reader"),
            inputs=[table_in],
            outputs=[dataset(SYM_NS, SYM_REPORT, output=True)],
        ),
    ]


# --- One path behind two Hive tables: symlinks table_a <-> path <-> table_b ---------------
STAR_NS = "postgres://lin-star:5432"
STAR_PATH, STAR_A, STAR_B = "/warehouse/lin/shared", "lin.shared_a", "lin.shared_b"
STAR_SOURCE, STAR_REPORT_A, STAR_REPORT_B = "star.source", "star.report_a", "star.report_b"
STAR_RUNS = [uuid7(T0 + timedelta(hours=7, minutes=i), 61 + i) for i in range(3)]


def star() -> list[bytes]:
    """A writer of the path, and a reader of each of its tables: the closure of table_a is all
    three datasets, but a symlink twin is one hop, so table_a's first frontier is
    {table_a, path}."""
    at = T0 + timedelta(hours=7)
    readers = [(STAR_A, STAR_REPORT_A), (STAR_B, STAR_REPORT_B)]
    events = [
        run_event(
            "COMPLETE",
            at,
            STAR_RUNS[0],
            ("lin-star", "star_writer"),
            inputs=[dataset(STAR_NS, STAR_SOURCE)],
            outputs=[dataset(HDFS, STAR_PATH, output=True)],
        )
    ]
    for i, (table, report) in enumerate(readers, start=1):
        events.append(
            run_event(
                "COMPLETE",
                at + minutes(i),
                STAR_RUNS[i],
                ("lin-star", f"star_reader_{i}"),
                inputs=[dataset(HDFS, STAR_PATH, table=(HIVE, table))],
                outputs=[dataset(STAR_NS, report, output=True)],
            )
        )
    return events


def all_events() -> list[list[bytes]]:
    """One batch per scenario, as the consumer would see them."""
    return [spark_chain(), cycle(), fan_out(), daily_runs(), symlinked(), star()]


# --- Direct and indirect column lineage (OpenLineage 1.x transformations) ------------------
COL_NS = "postgres://lin-columns:5432"
COL_SRC, COL_DST = "col.public.orders", "col.public.totals"
COL_RUN = uuid7(T0 + timedelta(hours=6), 51)


def column_kinds() -> list[bytes]:
    columns: Columns = {
        "total": [(COL_NS, COL_SRC, "amount", "DIRECT"), (COL_NS, COL_SRC, "status", "INDIRECT")],
        "region": [(COL_NS, COL_SRC, "region", "DIRECT"), (COL_NS, COL_SRC, "region", "INDIRECT")],
    }
    src, dst = dataset(COL_NS, COL_SRC), dataset(COL_NS, COL_DST, output=True, columns=columns)
    at = T0 + timedelta(hours=6)
    return [
        run_event("COMPLETE", at, COL_RUN, ("lin-columns", "totals"), inputs=[src], outputs=[dst]),
        *column_runs(),
        *column_sets(),
    ]


# One column pair written by two runs of a job, as DIRECT and then as INDIRECT: every graph
# shows it once per kind, with the latest time of the runs it came through.
COLU_SRC, COLU_DST = "col.public.events", "col.public.daily"
COLU_AT = [T0 + timedelta(hours=7), T0 + timedelta(hours=8)]
COLU_RUNS = [uuid7(at, 52 + i) for i, at in enumerate(COLU_AT)]


def column_runs() -> list[bytes]:
    kinds: list[Columns] = [
        {"n": [(COL_NS, COLU_SRC, "v", "DIRECT")]},
        {"n": [(COL_NS, COLU_SRC, "v", "INDIRECT")], "m": [(COL_NS, COLU_SRC, "w", "DIRECT")]},
    ]
    return [
        run_event(
            "COMPLETE",
            at,
            run_id,
            ("lin-columns", "daily"),
            inputs=[dataset(COL_NS, COLU_SRC)],
            outputs=[dataset(COL_NS, COLU_DST, output=True, columns=columns)],
        )
        for at, run_id, columns in zip(COLU_AT, COLU_RUNS, kinds, strict=True)
    ]


# One operation whose two events name different column sets: a pair both name (as DIRECT,
# then as INDIRECT) is one field per kind with the later time; a pair only the first names
# keeps its own time. The consumer stores the two sets as two rows.
COLS_SRC, COLS_DST = "col.public.clicks", "col.public.sessions"
COLS_AT = [T0 + timedelta(hours=9), T0 + timedelta(hours=10)]
COLS_RUN = uuid7(COLS_AT[0], 54)


def column_sets() -> list[bytes]:
    named: list[Columns] = [
        {"n": [(COL_NS, COLS_SRC, "v", "DIRECT")], "m": [(COL_NS, COLS_SRC, "w", "DIRECT")]},
        {"n": [(COL_NS, COLS_SRC, "v", "INDIRECT")]},
    ]
    return [
        run_event(
            kind,
            at,
            COLS_RUN,
            ("lin-columns", "sessions"),
            inputs=[dataset(COL_NS, COLS_SRC)],
            outputs=[dataset(COL_NS, COLS_DST, output=True, columns=columns)],
        )
        for kind, at, columns in zip(("START", "COMPLETE"), COLS_AT, named, strict=True)
    ]


# Readable names of the runs and operations, for comparing graphs.
RUN_LABELS = {
    DAG_RUN: "dag_run",
    TASK_RUN: "task_run",
    APP_RUN: "app_run",
    OP1: "op1",
    OP2: "op2",
    CYCLE_RUN1: "cycle_run1",
    CYCLE_RUN2: "cycle_run2",
    FAN_RUN: "fan_run",
    WIN_RUNS[0]: "day1",
    WIN_RUNS[1]: "day2",
    WIN_RUNS[2]: "day3",
    SYM_WRITER: "writer_run",
    SYM_READER: "reader_run",
    COL_RUN: "columns_run",
    STAR_RUNS[0]: "star_writer",
    STAR_RUNS[1]: "star_reader_1",
    STAR_RUNS[2]: "star_reader_2",
}
