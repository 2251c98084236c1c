"""Namespace and dataset-name normalisation: spec families, equivalences, hostile input, corpus."""

import json
from collections.abc import Iterator
from operator import add
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.naming import (
    FREE_FORM,
    UNKNOWN,
    Namespace,
    normalize_dataset_name,
    parse_job_namespace,
    parse_namespace,
)

pytestmark = pytest.mark.unit

# The repository is /work/main and the shared corpus /work/shared: ../shared from the root.
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "events"
PLACEHOLDER_MARKERS = ("{{", "${")
ATHENA = "athena.us-east-1.amazonaws.com"


def ns(location_type: str, name: str, *addresses: str) -> Namespace:
    return Namespace(location_type, name, addresses or (f"{location_type}://{name}",))


def word(location_type: str, name: str) -> Namespace:
    """A namespace that is a single word: its own name and address."""
    return Namespace(location_type, name, (name,))


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        ("postgres://db:5432", ns("postgres", "db:5432")),
        ("mysql://db", ns("mysql", "db:3306")),
        ("redshift://cluster.us-east-1", ns("redshift", "cluster.us-east-1:5439")),
        ("sqlserver://host", ns("sqlserver", "host:1433")),
        ("oracle://host", ns("oracle", "host:1521")),
        ("db2://host", ns("db2", "host:50000")),
        ("teradata://host", ns("teradata", "host:1025")),
        ("trino://host", ns("trino", "host:8080")),
        ("snowflake://MyOrg-MyAccount", ns("snowflake", "myorg-myaccount")),
        ("snowflake://acct.us-east-1.aws", ns("snowflake", "acct.us-east-1.aws")),
        ("bigquery", word("bigquery", "bigquery")),
        ("bigquery://any-project", word("bigquery", "bigquery")),
        ("azurecosmos://host/dbs/Orders/", ns("azurecosmos", "host/dbs/Orders")),
        ("azurekusto://x.kusto.windows.net", ns("azurekusto", "x.kusto.windows.net")),
        ("awsathena://athena.us-east-1.amazonaws.com", ns("awsathena", ATHENA)),
        ("athena://athena.us-east-1.amazonaws.com", ns("awsathena", ATHENA)),
        (
            "arn:aws:glue:us-east-1:12345",
            ns("glue", "us-east-1:12345", "arn:aws:glue:us-east-1:12345"),
        ),
        ("aws:glue:us-west-2:12345", ns("glue", "us-west-2:12345", "arn:aws:glue:us-west-2:12345")),
        (
            "arn:aws-cn:glue:cn-north-1:12",
            ns("glue", "cn-north-1:12", "arn:aws-cn:glue:cn-north-1:12"),
        ),
        ("gs://bucket", ns("gs", "bucket")),
        ("s3://bucket", ns("s3", "bucket")),
        ("s3a://bucket/warehouse/", ns("s3", "bucket")),
        ("s3n://bucket", ns("s3", "bucket")),
        ("hdfs://namenode", ns("hdfs", "namenode:8020")),
        ("hdfs://namenode:9820/user/hive/warehouse", ns("hdfs", "namenode:9820")),
        ("viewfs://cluster/data", ns("viewfs", "cluster")),
        ("dbfs://workspace", ns("dbfs", "workspace")),
        (
            "abfss://Container@Acct.dfs.core.windows.net/p",
            ns("abfss", "container@acct.dfs.core.windows.net"),
        ),
        (
            "abfs://container@acct.dfs.core.windows.net",
            ns("abfss", "container@acct.dfs.core.windows.net"),
        ),
        (
            "wasbs://container@acct.blob.core.windows.net",
            ns("wasbs", "container@acct.blob.core.windows.net"),
        ),
        ("kafka://broker", ns("kafka", "broker:9092")),
        ("kafka://b1:9092,b2:9093", ns("kafka", "b1:9092", "kafka://b1:9092", "kafka://b2:9093")),
        ("file", word("file", "file")),
        ("file://", word("file", "file")),
        ("file:///data/in", word("file", "file")),
        ("file:/data/warehouse", word("file", "file")),
        ("file://localhost/data/in", word("file", "file")),
        ("file://nas01/share", ns("file", "nas01")),
        ("hive://metastore", ns("hive", "metastore:9083")),
        ("thrift://metastore:9083", ns("hive", "metastore:9083")),
        ("cassandra://cassandra", ns("cassandra", "cassandra:9042")),
        (
            "mongodb://m1,m2:27018",
            ns("mongodb", "m1:27017", "mongodb://m1:27017", "mongodb://m2:27018"),
        ),
        ("clickhouse://localhost:8123", ns("clickhouse", "localhost:8123")),
        ("https://host", ns("https", "host:443")),
        ("spark://localhost:10000", ns("spark", "localhost:10000")),
        ("postgres://[2001:DB8:0::1]:6432", ns("postgres", "[2001:db8::1]:6432")),
        ("  postgres://db/  ", ns("postgres", "db:5432")),
    ],
)
def test_parse_namespace_spec_families(namespace: str, expected: Namespace) -> None:
    assert parse_namespace(namespace) == expected


@pytest.mark.parametrize(
    "spellings",
    [
        (
            "postgres://db",
            "postgres://db:5432",
            "POSTGRES://DB",
            "postgresql://db/",
            "postgres://db:05432",
        ),
        ("mysql://db", "mysql://db:3306", "mariadb://db"),
        ("hdfs://nn", "hdfs://nn:8020", "HDFS://NN:8020/"),
        ("kafka://broker", "kafka://broker:9092", "Kafka://Broker"),
        ("hive://ms", "hive://ms:9083", "thrift://ms:9083"),
        ("s3://bucket", "s3a://bucket/", "S3N://Bucket/path"),
        ("bigquery", "BigQuery", " bigquery "),
        ("file", "FILE", "file:/data", "file:///data/x", "file://localhost/", "file://127.0.0.1"),
        ("db.example.com", "db.example.com"),
    ],
)
def test_equivalent_spellings_are_one_location(spellings: tuple[str, ...]) -> None:
    assert len({parse_namespace(spelling) for spelling in spellings}) == 1


@pytest.mark.parametrize(
    "spelling",
    [
        "postgres://localhost",
        "postgres://LOCALHOST:5432",
        "postgres://127.0.0.1",
        "postgres://127.0.1.1:5432",
        "postgres://[::1]",
        "postgres://::1",
        "postgres://[0:0:0:0:0:0:0:1]:5432",
        "postgres://[::ffff:127.0.0.1]",
        "jdbc:postgresql://127.0.0.1/db",
    ],
)
def test_loopback_spellings_are_localhost(spelling: str) -> None:
    assert parse_namespace(spelling) == ns("postgres", "localhost:5432")


@pytest.mark.parametrize(
    ("namespace", "plain"),
    [
        ("postgres://user:secret@db:5432", "postgres://db"),
        ("kafka://user:secret@b1:9092,b2", "kafka://b1,b2"),
        ("jdbc:postgresql://db/app?user=u&password=secret", "postgres://db"),
        ("jdbc:oracle:thin:scott/secret@db:1521:ORCL", "oracle://db"),
        ("jdbc:sqlserver://db;user=sa;password=secret", "sqlserver://db"),
        ("mongodb://u:p@ss:secret@m1", "mongodb://m1"),
    ],
)
def test_credentials_are_dropped(namespace: str, plain: str) -> None:
    parsed = parse_namespace(namespace)
    assert parsed == parse_namespace(plain)
    assert "secret" not in repr(parsed)


@pytest.mark.parametrize(
    "brokers",
    [
        "kafka://b:9092,a:9092",
        "kafka://a:9092,b:9092",
        "kafka://a, b",
        "kafka://b:9092,a:9092,b:9092",
        "kafka://a:9092,,b:9092,",
    ],
)
def test_broker_lists_are_order_independent(brokers: str) -> None:
    expected = ns("kafka", "a:9092", "kafka://a:9092", "kafka://b:9092")
    assert parse_namespace(brokers) == expected


TNS = (
    "(DESCRIPTION=(ADDRESS_LIST=(ADDRESS=(PROTOCOL=TCP)(HOST=a)(PORT=1521))"
    "(ADDRESS=(HOST=b)(PORT=1522))))"
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("jdbc:postgresql://host:5432/db?user=x", ns("postgres", "host:5432")),
        ("JDBC:PostgreSQL://Host/db", ns("postgres", "host:5432")),
        ("jdbc:mysql://h/db", ns("mysql", "h:3306")),
        ("jdbc:mariadb://h:3307/db", ns("mysql", "h:3307")),
        (
            "jdbc:mysql:loadbalance://h2,h1/db",
            ns("mysql", "h1:3306", "mysql://h1:3306", "mysql://h2:3306"),
        ),
        ("jdbc:sqlserver://h:1433;databaseName=x", ns("sqlserver", "h:1433")),
        ("jdbc:jtds:sqlserver://h/db", ns("sqlserver", "h:1433")),
        ("jdbc:oracle:thin:@h:1521:SID", ns("oracle", "h:1521")),
        ("jdbc:oracle:thin:@//h:1522/service", ns("oracle", "h:1522")),
        (f"jdbc:oracle:thin:@{TNS}", ns("oracle", "a:1521", "oracle://a:1521", "oracle://b:1522")),
        ("jdbc:redshift://c.us-east-1:5439/dev", ns("redshift", "c.us-east-1:5439")),
        ("jdbc:hive2://hs2/default", ns("hive", "hs2:10000")),
        ("jdbc:clickhouse://localhost:8123/db", ns("clickhouse", "localhost:8123")),
        ("jdbc:bigquery://https://googleapis.com:443;ProjectId=p", word("bigquery", "bigquery")),
    ],
)
def test_jdbc_urls(url: str, expected: Namespace) -> None:
    assert parse_namespace(url) == expected


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        ("default", word(FREE_FORM, "default")),
        ("Airflow-Prod", word(FREE_FORM, "Airflow-Prod")),
        ("my-datasource-namespace", word(FREE_FORM, "my-datasource-namespace")),
        ("file.localhost", word(FREE_FORM, "file.localhost")),
        ("team:etl", word(FREE_FORM, "team:etl")),
        ("123", word(FREE_FORM, "123")),
        ("hive", word("hive", "hive")),
        ("KAFKA", word("kafka", "kafka")),
    ],
)
def test_bare_words(namespace: str, expected: Namespace) -> None:
    assert parse_namespace(namespace) == expected


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        ("default", word(FREE_FORM, "default")),
        ("flink-jobs", word(FREE_FORM, "flink-jobs")),
        ("spark_namespace", word(FREE_FORM, "spark_namespace")),
        ("airflow://Host:8080", ns("airflow", "host:8080")),
        ("spark://host", ns("spark", "host")),
        ("http://airflow-host:8081", ns("http", "airflow-host:8081")),
    ],
)
def test_job_namespaces(namespace: str, expected: Namespace) -> None:
    assert parse_job_namespace(namespace) == expected


@pytest.mark.parametrize(
    "hostile",
    [
        "",
        "   ",
        "\x00",
        "db\x00://x",
        "://",
        ":::",
        "jdbc:",
        "jdbc:oracle:thin:",
        "kafka://,,,",
        "postgres://h:99999999",
        "postgres://h:abc",
        "postgres://h:0",
        "postgres://h:" + "9" * 100_000,
        "postgres://[::1",
        "postgres://[not-an-ip]:5432",
        "hdfs:///user/data",
        "s3://",
        "\U0001f680",
        "x" * 100_000,
        "kafka://" + "b," * 50_000,
        "{{ result is string }}",
        "${json-unit.any-string}",
    ],
)
def test_hostile_namespaces_fall_back_to_unknown(hostile: str) -> None:
    name = hostile.strip() or UNKNOWN
    assert parse_namespace(hostile) == Namespace(UNKNOWN, name, (name,))


URLISH = st.text(alphabet=st.sampled_from(list("ab1:/@,[]=.;?# -_%()\x00é\U0001f680")), max_size=40)
PREFIXES = ["", "kafka://", "postgres://", "jdbc:", "jdbc:postgresql://", "jdbc:oracle:thin:@"]
PREFIXES += ["file:", "file://", "arn:aws:glue:", "s3a://", "abfss://", "azurecosmos://h/dbs", "["]
NAMESPACES = st.one_of(st.text(), st.builds(add, st.sampled_from(PREFIXES), URLISH))


@given(NAMESPACES)
def test_parse_namespace_is_total_and_addresses_are_canonical(text: str) -> None:
    parsed = parse_namespace(text)
    assert parsed.location_type
    assert parsed.location_name
    assert parsed.addresses
    assert parsed.addresses == tuple(sorted(set(parsed.addresses)))
    for address in parsed.addresses:  # an address names exactly one location
        again = parse_namespace(address)
        assert again.addresses == (address,)
        assert again.location_type == parsed.location_type


@pytest.mark.parametrize(
    ("location_type", "name", "expected"),
    [
        ("hdfs", "/warehouse/sales/dt=2024-01-01/region=eu", "/warehouse/sales"),
        ("hdfs", "/warehouse//sales/", "/warehouse/sales"),
        ("hdfs", "hdfs://nn//warehouse/sales/", "hdfs://nn/warehouse/sales"),
        ("viewfs", "/data/t/part=1/", "/data/t"),
        ("dbfs", "/mnt/t", "/mnt/t"),
        ("file", " /data/out/ ", "/data/out"),
        ("file", "/dt=2024-01-01", "/dt=2024-01-01"),
        ("file", "/", "/"),
        ("s3", "/sample_data/input.parquet", "sample_data/input.parquet"),
        ("s3a", "tables/orders/year=2024/month=01/", "tables/orders"),
        ("gs", "result.csv", "result.csv"),
        ("abfss", "lake//t/", "lake/t"),
        ("wasbs", "/c/t", "c/t"),
        ("s3", "s3://bucket/t/", "s3://bucket/t"),
        ("s3", "mydata _output", "mydata _output"),
        ("postgres", "  db.Public.Orders ", "db.Public.Orders"),
        ("kafka", "topic/a=b/", "topic/a=b/"),
        ("bigquery", "p.d.t", "p.d.t"),
        ("hdfs", "", UNKNOWN),
        ("hdfs", "   ", "   "),
        ("s3", "/", "/"),
    ],
)
def test_normalize_dataset_name(location_type: str, name: str, expected: str) -> None:
    assert normalize_dataset_name(location_type, name) == expected


PATHISH = st.text(alphabet=st.sampled_from(list("a=_1/ .:\t\x00é")), max_size=40)


@given(
    st.sampled_from(["hdfs", "s3", "S3A", "gs", "file", "abfss", "postgres", UNKNOWN, "", "??"]),
    st.one_of(st.text(), st.builds(add, st.sampled_from(["", "/", "s3://b/", "dt=1/"]), PATHISH)),
)
def test_normalize_dataset_name_is_total_and_idempotent(location_type: str, name: str) -> None:
    once = normalize_dataset_name(location_type, name)
    assert once
    assert normalize_dataset_name(location_type, once) == once


def test_results_are_memoised() -> None:
    assert parse_namespace("kafka://memo:9092") is parse_namespace("kafka://memo:9092")


def _corpus_events() -> Iterator[Any]:
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            yield from (json.loads(line) for line in lines if line.strip())
        elif path.suffix == ".json":
            loaded = json.loads(path.read_text(encoding="utf-8"))
            yield from loaded if isinstance(loaded, list) else [loaded]


def _dataset_namespaces(event: dict[str, Any]) -> Iterator[Any]:
    for dataset in [*(event.get("inputs") or []), *(event.get("outputs") or [])]:
        yield dataset.get("namespace")
        symlinks = (dataset.get("facets") or {}).get("symlinks") or {}
        yield from (link.get("namespace") for link in symlinks.get("identifiers") or [])


def _job_namespaces(event: dict[str, Any]) -> Iterator[Any]:
    yield (event.get("job") or {}).get("namespace")
    parent = ((event.get("run") or {}).get("facets") or {}).get("parent") or {}
    yield (parent.get("job") or {}).get("namespace")


def _corpus_namespaces() -> tuple[set[str], set[str]]:
    assert CORPUS.is_dir(), f"OpenLineage corpus missing: expected it at {CORPUS}"
    events = [event for event in _corpus_events() if isinstance(event, dict)]
    datasets = {n for event in events for n in _dataset_namespaces(event) if isinstance(n, str)}
    jobs = {n for event in events for n in _job_namespaces(event) if isinstance(n, str)}
    return datasets, jobs


def test_corpus_namespaces_parse_without_unknowns() -> None:
    datasets, jobs = _corpus_namespaces()
    assert len(datasets) > 20
    assert len(jobs) > 20
    for job_namespace in jobs:
        assert parse_job_namespace(job_namespace).addresses
    unknown = {
        namespace
        for namespace in datasets
        if parse_namespace(namespace).location_type == UNKNOWN
        and not any(marker in namespace for marker in PLACEHOLDER_MARKERS)
    }
    assert unknown == set()


def test_corpus_warehouse_symlinks_share_the_location_of_their_files() -> None:
    datasets, _ = _corpus_namespaces()
    pairs = [
        ("hdfs://dataproc-producer-test-m", "hdfs://dataproc-producer-test-m/user/hive/warehouse"),
        ("file", "file:/tmp/warehouse"),
        ("s3://my-bucket-test", "s3://my-bucket-test/my-warehouse/"),
    ]
    for files, warehouse in pairs:
        assert {files, warehouse} <= datasets
        assert parse_namespace(files) == parse_namespace(warehouse)
