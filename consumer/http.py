"""A tiny HTTP endpoint for /metrics (Prometheus text) and /health, on the consumer's loop.

The consumer has no web framework; asyncio's server keeps it that way.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from consumer.metrics import Metrics

log = logging.getLogger("threadline.consumer.http")

HealthCheck = Callable[[], Awaitable[dict[str, object]]]


class StatusServer:
    def __init__(self, metrics: Metrics, health: HealthCheck) -> None:
        self.metrics = metrics
        self.health = health
        self.server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> None:
        self.server = await asyncio.start_server(self._serve, host, port)
        log.info("metrics and health on http://%s:%d", host, port)

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), timeout=5)
            path = request.split(b" ")[1] if request.count(b" ") >= 2 else b"/"
            status, content_type, body = await self._route(path)
            head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass  # the client hung up or stalled: nothing left to answer
        finally:
            writer.close()

    async def _route(self, path: bytes) -> tuple[str, str, bytes]:
        if path.startswith(b"/metrics"):
            return "200 OK", CONTENT_TYPE_LATEST, generate_latest(self.metrics.registry)
        if path.startswith(b"/health"):
            report = await self.health()
            status = "200 OK" if report.get("status") == "ok" else "503 Service Unavailable"
            return status, "application/json", orjson.dumps(report)
        return "404 Not Found", "text/plain", b"not found\n"
