"""An Airflow DAG whose task submits the example Spark job as its OpenLineage child.

The OpenLineage provider (apache-airflow-providers-openlineage) reports the DAG run and
the task run; the task passes its own identity to Spark as the parent and the DAG run as
the root, so Threadline links DAG -> task -> Spark application -> operations -> datasets.
The macros come from the provider's plugin (`macros.OpenLineageProviderPlugin`).

Needs `spark-submit` on PATH (pip install pyspark gives one), SPARK_JARS and the rest of
the environment of examples/spark/orders_report.py; the OpenLineage transport of Airflow
itself is configured in examples/airflow/openlineage.env.
"""

from datetime import UTC, datetime
from pathlib import Path

from airflow.providers.standard.operators.bash import (  # type: ignore[import-not-found]  # Airflow has its own venv
    BashOperator,
)
from airflow.sdk import DAG  # type: ignore[import-not-found]  # Airflow has its own venv

JOB = Path(__file__).resolve().parents[2] / "spark" / "orders_report.py"
OL = "macros.OpenLineageProviderPlugin"
# spark.openlineage.* settings that make the Spark application a child of this task run
# and a descendant of this DAG run (the root of the chain, also used for the Kafka key).
PARENT_SETTINGS = {
    "spark.openlineage.parentJobNamespace": f"{{{{ {OL}.lineage_job_namespace() }}}}",
    "spark.openlineage.parentJobName": f"{{{{ {OL}.lineage_job_name(task_instance) }}}}",
    "spark.openlineage.parentRunId": f"{{{{ {OL}.lineage_run_id(task_instance) }}}}",
    "spark.openlineage.rootParentJobNamespace": (
        f"{{{{ {OL}.lineage_root_job_namespace(task_instance) }}}}"
    ),
    "spark.openlineage.rootParentJobName": f"{{{{ {OL}.lineage_root_job_name(task_instance) }}}}",
    "spark.openlineage.rootParentRunId": f"{{{{ {OL}.lineage_root_run_id(task_instance) }}}}",
}
# --jars: the listener must be on the driver's class path before the application starts
# ($SPARK_JARS = the output of scripts/spark-jars.sh on the worker).
SUBMIT = " ".join(
    ['spark-submit --master "local[2]" --jars "$SPARK_JARS"']
    + [f"--conf {key}={value}" for key, value in PARENT_SETTINGS.items()]
    + [str(JOB)]
)

with DAG(
    dag_id="threadline_example",
    schedule=None,
    start_date=datetime(2025, 1, 1, tzinfo=UTC),
    catchup=False,
    tags=["threadline", "openlineage"],
):
    BashOperator(task_id="orders_report", bash_command=SUBMIT)
