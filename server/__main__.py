"""`threadline-server`: build the settings from the environment and serve the API."""

import uvicorn

from server.app import create_app
from server.observability import configure_logging
from server.runtime import tune_server_gc
from server.settings import ServerSettings
from shared.runtime import keep_freed_memory


def main() -> None:
    settings = ServerSettings()
    configure_logging(settings.log)
    app = create_app(settings)
    tune_server_gc()
    keep_freed_memory()
    uvicorn.run(
        app,
        host=settings.server.host,
        port=settings.server.port,
        log_config=None,  # our root handler formats every line, with the request id
        access_log=False,  # RequestContextMiddleware logs each request itself
        proxy_headers=True,
        # The C event loop and HTTP parser (benchmarks/README.md, "Optimisations applied").
        loop="uvloop",
        http="httptools",
    )


if __name__ == "__main__":
    main()
