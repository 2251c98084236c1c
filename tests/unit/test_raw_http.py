"""The harness's lean HTTP client against a real HTTP/1.1 server on the loopback: status,
body and headers as sent, chunked bodies read whole, the connection kept, reopened once
the server closed it, and an answer it cannot frame refused rather than misread."""

import select
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks.raw_http import RawClient, target

pytestmark = pytest.mark.unit


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn
    seen: list[tuple[str, str | None, int]] = []  # noqa: RUF012 (one test server at a time)

    def do_GET(self) -> None:
        _Handler.seen.append((self.path, self.headers.get("Authorization"), self.client_address[1]))
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            big = b"x" * 200_000
            self.wfile.write(b'2\r\n["\r\n%x;ext=1\r\n%s\r\n' % (len(big), big))
            self.wfile.flush()
            self.wfile.write(b'2\r\n"]\r\n0\r\n\r\n')
            return
        if self.path.startswith("/gzip"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "gzip, chunked")
            self.end_headers()
            self.wfile.write(b"0\r\n\r\n")
            return
        body = b'{"big": "' + b"x" * 300_000 + b'"}' if self.path == "/big" else b'{"a": 1}'
        self.send_response(404 if self.path.startswith("/missing") else 200)
        self.send_header("Content-Length", str(len(body)))
        if self.path == "/close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """No per-request line on stderr: the test's output is its assertions."""


@pytest.fixture
def base_url() -> Iterator[str]:
    _Handler.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_status_body_and_headers_on_one_connection(base_url: str) -> None:
    client = RawClient(base_url, {"Authorization": "Bearer t"})
    try:
        query = {"depth": 3, "since": "2026-01-01T00:00:00+00:00"}
        assert client.request(target("/v1/x", query)) == (200, b'{"a": 1}')
        assert client.request("/missing") == (404, b'{"a": 1}')
        status, body = client.request("/big")
    finally:
        client.close()
    assert status == 200
    assert len(body) == 300_011
    assert body.endswith(b'x"}')
    paths = [path for path, _, _ in _Handler.seen]
    assert paths == ["/v1/x?depth=3&since=2026-01-01T00%3A00%3A00%2B00%3A00", "/missing", "/big"]
    assert {auth for _, auth, _ in _Handler.seen} == {"Bearer t"}
    assert len({connection for _, _, connection in _Handler.seen}) == 1


def test_a_closed_connection_is_opened_again(base_url: str) -> None:
    client = RawClient(base_url)
    try:
        assert client.get("/close") == b'{"a": 1}'
        # As between two requests of the harness: the server's close has arrived first.
        assert select.select([client.sock], [], [], 5)[0]
        assert client.get("/after") == b'{"a": 1}'
    finally:
        client.close()
    connections = [connection for _, _, connection in _Handler.seen]
    assert len(set(connections)) == 2


def test_a_chunked_answer_is_read_whole_and_the_connection_kept(base_url: str) -> None:
    client = RawClient(base_url)
    try:
        assert client.get("/chunked") == b'["' + b"x" * 200_000 + b'"]'
        assert client.get("/after") == b'{"a": 1}'
    finally:
        client.close()
    assert len({connection for _, _, connection in _Handler.seen}) == 1


def test_an_answer_it_cannot_frame_is_refused(base_url: str) -> None:
    client = RawClient(base_url)
    try:
        with pytest.raises(ConnectionError, match="Content-Length or chunked"):
            client.get("/gzip")
    finally:
        client.close()


def test_a_target_without_parameters_is_the_path() -> None:
    assert target("/v1/lineage", {}) == "/v1/lineage"
