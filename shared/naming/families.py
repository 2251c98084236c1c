"""The storage families of the OpenLineage naming spec: aliases, default ports, quirks."""

UNKNOWN = "unknown"
FREE_FORM = "namespace"
LOCAL_FILE = "file"

# Real namespaces are short. Longer ones are not parsed and bypass the caches (as do long
# dataset names) so that hostile input cannot pin gigabytes in them.
MAX_NAMESPACE_LEN = 1024
MAX_CACHED_NAME_LEN = 1024
CACHE_SIZE = 65536

SCHEME_ALIASES = {
    "postgresql": "postgres",
    "mariadb": "mysql",
    "mssql": "sqlserver",
    "s3a": "s3",
    "s3n": "s3",
    "gcs": "gs",
    "abfs": "abfss",
    "wasb": "wasbs",
    "thrift": "hive",  # Hive metastore URIs (hive.metastore.uris) are thrift://host:port
    "athena": "awsathena",
}

DEFAULT_PORTS = {
    "postgres": 5432,
    "mysql": 3306,
    "redshift": 5439,
    "sqlserver": 1433,
    "oracle": 1521,
    "db2": 50000,
    "teradata": 1025,
    "trino": 8080,
    "presto": 8080,
    "hive": 9083,
    "cassandra": 9042,
    "mongodb": 27017,
    "kafka": 9092,
    "hdfs": 8020,
    "clickhouse": 8123,
    "oceanbase": 2881,
    "http": 80,
    "https": 443,
}

# The spec names these by a constant word: an authority given with them carries no identity.
BARE_FAMILIES = frozenset({"bigquery", "pubsub"})

# As a bare word ("hive") a namespace still names its storage family.
STORAGE_FAMILIES = frozenset(
    {"postgres", "mysql", "redshift", "sqlserver", "oracle", "db2", "teradata", "trino"}
    | {"presto", "hive", "cassandra", "mongodb", "kafka", "clickhouse", "oceanbase", "iceberg"}
    | {"snowflake", "bigquery", "pubsub", "azurecosmos", "azurekusto", "awsathena", "glue"}
    | {"hdfs", "viewfs", "s3", "gs", "dbfs", "abfss", "wasbs", LOCAL_FILE}
)

# Azure storage puts the container where other URLs put credentials: keep it.
CONTAINER_FAMILIES = frozenset({"abfss", "wasbs"})

# A Cosmos DB namespace names a database (azurecosmos://{host}/dbs/{database}), not a host.
PATH_SCOPED_FAMILIES = frozenset({"azurecosmos"})

# viewfs stays its own family: it names a client-side mount table, not one namenode.
FILE_FAMILIES = frozenset({"hdfs", "viewfs", "s3", "gs", LOCAL_FILE, "abfss", "wasbs", "dbfs"})

# Object keys have no root: "/x" and "x" in one bucket are the same object.
OBJECT_STORES = frozenset({"s3", "gs", "abfss", "wasbs"})

# JDBC sub-protocol -> (family, default port when it differs from the family's).
JDBC_PROTOCOLS: dict[str, tuple[str, int | None]] = {
    "postgresql": ("postgres", None),
    "mysql": ("mysql", None),
    "mariadb": ("mysql", None),
    "sqlserver": ("sqlserver", None),
    "redshift": ("redshift", None),
    "db2": ("db2", None),
    "teradata": ("teradata", None),
    "trino": ("trino", None),
    "presto": ("presto", None),
    "snowflake": ("snowflake", None),
    "bigquery": ("bigquery", None),
    "hive2": ("hive", 10000),  # HiveServer2, not the metastore
}


def family_of(scheme: str) -> str:
    """The family a lower-case scheme or location type belongs to."""
    return SCHEME_ALIASES.get(scheme, scheme)
