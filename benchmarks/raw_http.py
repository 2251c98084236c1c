"""A lean HTTP/1.1 client for the harnesses: GETs on one keep-alive socket.

httpx's own work costs ~1-2 ms per request on this VM (benchmarks/README.md, "What limits
lineage on this machine": an unknown path takes the client 1.0-1.8 ms against the server's
0.3). For a graph the server answers in 3-5 ms, that fixed cost is a third of what the
harness records, for both systems alike. This client costs ~0.1 ms: `lineage_floor.py` times
the server with it, and `api.py --client raw` times both systems with it.
"""

import select
import socket
from urllib.parse import urlencode, urlsplit


def target(path: str, params: dict[str, object]) -> str:
    """The request target: the path and its query string, encoded as httpx encodes it."""
    return f"{path}?{urlencode(params)}" if params else path


class RawClient:
    """HTTP/1.1 GETs on one keep-alive socket, reading exactly Content-Length bytes.

    Enough for the two servers measured here (uvicorn: every answer has a Content-Length or
    is chunked, Threadline's large lineage bodies; no compression unless asked for, and this
    client never asks); anything else is an error."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None) -> None:
        url = urlsplit(base_url)
        if url.hostname is None or url.port is None:
            raise ValueError(f"a base URL with host and port expected: {base_url}")
        self.host, self.address = url.netloc, (url.hostname, url.port)
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self._head = f"HTTP/1.1\r\nHost: {self.host}\r\n{extra}\r\n".encode()
        self.sock = self._connect()

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self.address)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def get(self, target: str) -> bytes:
        """The body of a GET (any status)."""
        return self.request(target)[1]

    def request(self, target: str) -> tuple[int, bytes]:
        """(status, body) of a GET."""
        # The server closes a connection idle for its keep-alive timeout (5 s), as it is
        # while the client's own request for a large graph runs: connect again first.
        if select.select([self.sock], [], [], 0)[0] and not self.sock.recv(1, socket.MSG_PEEK):
            self.sock.close()
            self.sock = self._connect()
        self.sock.sendall(b"GET " + target.encode() + b" " + self._head)
        data = bytearray()
        while (end := data.find(b"\r\n\r\n")) < 0:
            data += self._recv()
        head, body = bytes(data[:end]), data[end + 4 :]  # bytearray: appended in place
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        lengths = [int(line.split(b":", 1)[1]) for line in lines if _named(line, b"content-length")]
        codings = [
            line.split(b":", 1)[1].strip().lower()
            for line in lines
            if _named(line, b"transfer-encoding")
        ]
        if codings == [b"chunked"] and not lengths:
            return status, self._chunked(body)
        if len(lengths) != 1 or codings:
            raise ConnectionError(f"an answer without one Content-Length or chunked: {head!r}")
        while len(body) < lengths[0]:
            body += self._recv()
        return status, bytes(body)

    def _chunked(self, data: bytearray) -> bytes:
        """A chunked body (Threadline's large lineage bodies), `data` its first bytes read:
        each chunk's size line, its bytes and CRLF, to the empty chunk (no trailers)."""
        body, at = bytearray(), 0
        while True:
            while (end := data.find(b"\r\n", at)) < 0:
                data += self._recv()
            size = int(data[at:end].split(b";", 1)[0], 16)
            start = end + 2
            while len(data) < start + size + 2:
                data += self._recv()
            if data[start + size : start + size + 2] != b"\r\n":
                raise ConnectionError("a chunk not followed by CRLF")
            if size == 0:
                if len(data) != start + 2:
                    raise ConnectionError("bytes after the last chunk (trailers?)")
                return bytes(body)
            body += data[start : start + size]
            at = start + size + 2

    def _recv(self) -> bytes:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()


def _named(line: bytes, name: bytes) -> bool:
    return line.lower().startswith(name + b":")
