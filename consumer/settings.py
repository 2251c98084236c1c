"""Consumer settings: `THREADLINE__DATABASE__*`, `THREADLINE__KAFKA__*`, `THREADLINE__CONSUMER__*`,
`THREADLINE__METRICS__*`, `THREADLINE__LOG__*`."""

from typing import Literal

from pydantic import Field, SecretStr

from shared.settings import DatabaseSettings, LogSettings, RootSettings, Section

MiB = 1024 * 1024


class KafkaSettings(Section):
    bootstrap_servers: str = Field(
        default="127.0.0.1:19092", description="Comma-separated Kafka bootstrap servers."
    )
    topic: str = Field(default="openlineage", description="Topic the OpenLineage events arrive on.")
    group_id: str = Field(default="threadline", description="Consumer group shared by all workers.")
    dead_letter_topic: str = Field(
        default="openlineage.dead-letter",
        description="Where rejected events go, with the reason and origin in headers.",
    )
    client_id: str = Field(default="threadline-consumer", description="Kafka client id.")
    auto_offset_reset: Literal["earliest", "latest"] = Field(
        default="earliest", description="Where a new consumer group starts reading."
    )
    max_records: int = Field(default=2000, ge=1, description="Most events in one batch.")
    batch_timeout_ms: int = Field(
        default=500, ge=1, description="Longest wait for a batch to fill, in milliseconds."
    )
    # Small fetch limits bound the read-ahead buffered in the consumer (40k events behind:
    # peak RSS 251 MB with 32/50 MiB, 166-192 MB with 1/8 MiB, same events/s). 2 MiB per
    # partition rather than 1 lets a worker that owns few partitions (one of several) fill
    # its batches: two consumers +6% events/s, one the same (eight alternated pairs each;
    # 40k events behind: peak RSS 172 MB against 168). A larger event still comes through:
    # the broker returns a first batch over the limits whole.
    max_partition_fetch_bytes: int = Field(
        default=2 * MiB, ge=64 * 1024, description="Per-partition fetch size (read-ahead)."
    )
    fetch_max_bytes: int = Field(
        default=8 * MiB,
        ge=MiB,
        description="Most bytes one fetch brings back over all partitions (read-ahead).",
    )
    # The client keeps one fetch in flight per broker. Once some partitions are drained, that
    # fetch asks only for them and the broker holds it for up to this long, while partitions
    # with records left wait behind it (aiokafka's default, 500 ms, showed as a ~0.4 s stall
    # before the last few thousand events of a benchmark run).
    fetch_max_wait_ms: int = Field(
        default=100,
        ge=0,
        le=10_000,
        description="Longest the broker holds a fetch for new records (milliseconds).",
    )
    # aiokafka reads every response through an asyncio StreamReader with a 64 KiB limit, so a
    # fetch response of a few MiB paused and resumed the socket every 128 KiB; a larger
    # limit (held at most twice over, per broker connection) gave +4% events/s in three
    # alternated benchmark pairs, at the same peak RSS (benchmarks/README.md).
    read_buffer_bytes: int = Field(
        default=4 * MiB,
        ge=64 * 1024,
        description="Socket read buffer limit of the Kafka client's connections (bytes).",
    )
    session_timeout_ms: int = Field(
        default=30_000,
        ge=6_000,
        description="Group session timeout: a worker silent this long is replaced.",
    )
    max_request_size: int = Field(
        default=32 * MiB, ge=MiB, description="Largest dead-letter message the consumer may send."
    )
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        default="PLAINTEXT", description="Kafka security protocol."
    )
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field(
        default="PLAIN", description="SASL mechanism when the protocol is SASL_*."
    )
    sasl_username: str | None = Field(default=None, description="SASL user name.")
    sasl_password: SecretStr | None = Field(default=None, description="SASL password.")
    ssl_cafile: str | None = Field(default=None, description="CA bundle to verify the brokers.")
    ssl_certfile: str | None = Field(default=None, description="Client certificate (mutual TLS).")
    ssl_keyfile: str | None = Field(default=None, description="Client private key (mutual TLS).")


class ConsumerOptions(Section):
    max_event_bytes: int = Field(
        default=16 * MiB, ge=10 * MiB, description="Events larger than this are dead-lettered."
    )
    retry_base_s: float = Field(
        default=0.1, gt=0, description="First backoff after a transient database error."
    )
    retry_cap_s: float = Field(default=5.0, gt=0, description="Longest backoff between retries.")
    aliases: list[list[str]] = Field(
        default_factory=list,
        description='Alias groups, JSON: [["hdfs://nn1:8020","hdfs://nn2:8020"], ...]; each '
        "group's namespaces are one location.",
    )
    native_extract: bool = Field(
        default=True,
        description="Decode, extract, merge and re-key with the native module (native/: plain "
        "Spark, Airflow and generic RunEvents, the same records for about a third of the CPU); "
        "false: Python only.",
    )


class MetricsSettings(Section):
    host: str = Field(default="127.0.0.1", description="Address of /metrics and /health.")
    port: int = Field(default=9108, ge=0, le=65535, description="Port; 0 disables the endpoint.")


class ConsumerSettings(RootSettings):
    database: DatabaseSettings = DatabaseSettings()
    kafka: KafkaSettings = KafkaSettings()
    consumer: ConsumerOptions = ConsumerOptions()
    metrics: MetricsSettings = MetricsSettings()
    log: LogSettings = LogSettings()
