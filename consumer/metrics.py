"""Prometheus metrics of the consumer, on a registry of its own."""

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    def __init__(self) -> None:
        self.last_batch_at = 0.0
        self.registry = CollectorRegistry()
        r = self.registry
        self.consumed = Counter("threadline_events_consumed", "Events read from Kafka", registry=r)
        self.written = Counter(
            "threadline_events_written", "Events committed to PostgreSQL", registry=r
        )
        self.rejected = Counter(
            "threadline_events_rejected", "Events dead-lettered, by reason", ["reason"], registry=r
        )
        self.db_retries = Counter(
            "threadline_db_retries", "Transient database errors retried", registry=r
        )
        self.batch_size = Histogram(
            "threadline_batch_size",
            "Events per batch",
            registry=r,
            buckets=(1, 10, 50, 100, 250, 500, 1000, 2000, 5000),
        )
        self.batch_seconds = Histogram(
            "threadline_batch_seconds",
            "Batch latency, consume to commit",
            registry=r,
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        self.lag = Gauge(
            "threadline_consumer_lag",
            "Records behind the high watermark",
            ["partition"],
            registry=r,
        )
        self.last_batch = Gauge(
            "threadline_last_batch_timestamp", "Unix time of the last committed batch", registry=r
        )
