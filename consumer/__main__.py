"""`threadline-consumer`: read OpenLineage events from Kafka into PostgreSQL."""

from consumer.app import create_app
from consumer.settings import ConsumerSettings
from shared.logs import configure_logging
from shared.runtime import keep_freed_memory, run, tune_gc


def main() -> None:
    settings = ConsumerSettings()
    configure_logging(settings.log)
    app = create_app(settings)
    tune_gc()
    keep_freed_memory()
    run(app.run())


if __name__ == "__main__":
    main()
