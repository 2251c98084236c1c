"""Request ids and logging: every log line written while serving a request carries its id.

The id comes from the caller's `X-Request-ID` when it is sane (so a gateway's id flows
through), else a fresh one; it is echoed in the response and kept in a contextvar that a
logging filter copies onto every record, whichever logger wrote it.
"""

import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from typing import Any, TextIO

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.settings import LogSettings

REQUEST_ID_HEADER = "x-request-id"
_request_id: ContextVar[str | None] = ContextVar("threadline_request_id", default=None)
# Bounded and printable: a caller's id goes into our logs and headers verbatim.
_SAFE_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
access_log = logging.getLogger("threadline.server.access")


def current_request_id() -> str | None:
    return _request_id.get()


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (`-` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, extras."""

    # uvicorn adds color_message (its message with ANSI colours): noise in JSON.
    _STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {
        "message",
        "request_id",
        "color_message",
    }

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        doc.update({k: v for k, v in record.__dict__.items() if k not in self._STANDARD})
        if record.exc_info:
            doc["exc_info"] = self.formatException(record.exc_info)
        return orjson.dumps(doc, default=str).decode()


def configure_logging(settings: LogSettings, stream: TextIO | None = None) -> None:
    """Root handler (stderr) with the request-id filter; uvicorn's loggers propagate to it."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    if settings.json_format:
        handler.setFormatter(JsonFormatter())
    else:
        fmt = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
        handler.setFormatter(logging.Formatter(fmt))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def _incoming_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == REQUEST_ID_HEADER.encode():
            text = value.decode("latin-1")
            if _SAFE_ID.fullmatch(text):
                return str(text)
    return uuid.uuid4().hex


class RequestContextMiddleware:
    """Pure ASGI (so the contextvar reaches the handler): request id in and out, access log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_id(scope)
        token = _request_id.set(request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
            access_log.info(
                "%s %s %s %.1fms",
                scope["method"],
                scope["path"],
                status,
                elapsed_ms,
                extra={"status": status, "duration_ms": elapsed_ms},
            )
            _request_id.reset(token)
