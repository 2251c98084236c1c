"""Debezium: a connector task is a long-running (streaming) run writing change topics.

Debezium (3.2+) sends START, periodic RUNNING and COMPLETE/FAIL events per
connector task (jobType TASK, processingType STREAMING); its outputs are the
Kafka topics it writes. The operation's type is the connector class
(`PostgresConnector`) from the `debezium_config` facet. Nothing else of that
facet is read or stored: it is the connector's configuration, with hosts,
user names and sometimes passwords in it.
"""

from consumer.decode import Event
from consumer.extract.facets import obj
from consumer.extract.runs import Placement, generic
from consumer.records import Extracted
from shared.enums import JobType

CONNECTOR_CLASS = "connector.class="


def extract_debezium(out: Extracted, event: Event) -> Placement:
    return generic(out, event, JobType.DEBEZIUM, operation={"type": connector(event)})


def connector(event: Event) -> str | None:
    """`io.debezium.connector.postgresql.PostgresConnector` -> `PostgresConnector`."""
    configs = obj(event.run_facets, "debezium_config").get("configs")
    for entry in configs if isinstance(configs, list) else []:
        if isinstance(entry, str) and entry.startswith(CONNECTOR_CLASS):
            return entry[len(CONNECTOR_CLASS) :].rpartition(".")[2][:200] or None
    return None
