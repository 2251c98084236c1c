"""A test OpenID Connect issuer: RSA and EC signing keys, a JWKS served on loopback."""

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://login.threadline.test/realms/data"
AUDIENCE = "threadline-api"


@dataclass
class Issuer:
    """Signing keys and the JWKS document a loopback HTTP server publishes."""

    rsa_key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    ec_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    published: list[dict[str, Any]] = field(default_factory=list)
    fetches: int = 0
    down: bool = False

    def publish(self, *keys: tuple[str, Any]) -> None:
        self.published = [self.jwk(kid, key) for kid, key in keys]

    @staticmethod
    def jwk(kid: str, key: Any) -> dict[str, Any]:
        if isinstance(key, rsa.RSAPrivateKey):
            data = orjson.loads(RSAAlgorithm.to_jwk(key.public_key()))
            data["alg"] = "RS256"
        else:
            data = orjson.loads(ECAlgorithm.to_jwk(key.public_key()))
        return {**data, "kid": kid, "use": "sig"}

    def token(self, kid: str = "rsa-1", key: Any = None, alg: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 300}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key or self.rsa_key, algorithm=alg, headers={"kid": kid})


@pytest.fixture
def issuer() -> Iterator[tuple[Issuer, str]]:
    state = Issuer()
    state.publish(("rsa-1", state.rsa_key), ("ec-1", state.ec_key))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.fetches += 1
            if state.down:
                self.send_error(503)
                return
            body = orjson.dumps({"keys": state.published})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass  # keep test output free of per-request access logs

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
