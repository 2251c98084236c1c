"""Small enums shared by the consumer (writes) and the server (reads)."""

from enum import IntEnum, IntFlag, StrEnum


class Status(IntEnum):
    """Run/operation status; the integer order is the merge order (status only moves forward)."""

    UNKNOWN = 0
    STARTED = 1
    SUCCEEDED = 2
    FAILED = 3
    KILLED = 4


class JobType(StrEnum):
    SPARK_APPLICATION = "SPARK_APPLICATION"
    SPARK_JOB = "SPARK_JOB"
    AIRFLOW_DAG = "AIRFLOW_DAG"
    AIRFLOW_TASK = "AIRFLOW_TASK"
    FLINK_JOB = "FLINK_JOB"
    DBT_JOB = "DBT_JOB"
    DBT_MODEL = "DBT_MODEL"
    HIVE_SESSION = "HIVE_SESSION"
    HIVE_QUERY = "HIVE_QUERY"
    DEBEZIUM = "DEBEZIUM"
    UNKNOWN = "UNKNOWN"


class OutputType(IntFlag):
    """Output kinds as bits: several events of one operation are unioned with bit-OR."""

    NONE = 0
    CREATE = 1
    ALTER = 2
    RENAME = 4
    APPEND = 8
    OVERWRITE = 16
    DROP = 32
    TRUNCATE = 64


class ColumnLineageType(IntFlag):
    """Column lineage kinds as bits (OpenLineage transformation types), unioned with bit-OR."""

    NONE = 0
    DIRECT = 1
    INDIRECT = 2


class SymlinkType(StrEnum):
    METASTORE = "METASTORE"
    WAREHOUSE = "WAREHOUSE"


class IODirection(IntEnum):
    INPUT = 0
    OUTPUT = 1
