"""API authentication: static bearer tokens, and OIDC JWTs checked against a JWKS."""

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from pydantic import SecretStr

from server.auth_oidc import OidcSettings
from server.settings import AuthSettings
from tests.server.conftest import open_client, server_settings

pytestmark = pytest.mark.db

PROBLEM = "application/problem+json"
ISSUER, AUDIENCE = "https://login.example/realm", "threadline-api"


async def test_static_token_auth(database_url: str) -> None:
    auth = AuthSettings(enabled=True, static_tokens=[SecretStr("old"), SecretStr("s3cret")])
    async with open_client(server_settings(database_url, auth=auth)) as client:
        anonymous = await client.get("/v1/datasets")
        assert (anonymous.status_code, anonymous.headers["content-type"]) == (401, PROBLEM)
        assert anonymous.headers["www-authenticate"] == "Bearer"
        wrong = await client.get("/v1/datasets", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = await client.get("/v1/datasets", headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 200
        assert (await client.get("/health")).status_code == 200
        assert (await client.get("/openapi.json")).status_code == 200


def test_auth_needs_a_token_or_oidc() -> None:
    with pytest.raises(ValueError, match="static_tokens"):
        AuthSettings(enabled=True)


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def jwks_url(signing_key: rsa.RSAPrivateKey) -> Iterator[str]:
    """The public key as a JWKS document, served on loopback like an issuer would."""
    jwk: dict[str, Any] = RSAAlgorithm.to_jwk(signing_key.public_key(), as_dict=True)
    body = orjson.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass  # keep test output free of per-request access logs

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/jwks"
    server.shutdown()


def _token(key: rsa.RSAPrivateKey, **claims: Any) -> str:
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "ui", "iat": now, "exp": now + 300}
    return jwt.encode({**payload, **claims}, key, algorithm="RS256", headers={"kid": "k1"})


async def test_oidc_tokens(
    database_url: str, signing_key: rsa.RSAPrivateKey, jwks_url: str
) -> None:
    oidc = OidcSettings.model_validate(
        {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": jwks_url}
    )
    auth = AuthSettings(enabled=True, oidc=oidc)
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    async with open_client(server_settings(database_url, auth=auth)) as client:

        async def status(token: str) -> int:
            headers = {"Authorization": f"Bearer {token}"}
            return (await client.get("/v1/locations", headers=headers)).status_code

        assert await status(_token(signing_key)) == 200
        assert await status(_token(signing_key, aud="someone-else")) == 401
        assert await status(_token(signing_key, exp=int(time.time()) - 3600)) == 401
        assert await status(_token(other_key)) == 401
        assert await status("not-a-jwt") == 401
