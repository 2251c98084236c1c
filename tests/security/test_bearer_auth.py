"""Bearer-token auth on every /v1 route, and the read-only database role seen through the API.

Static tokens are the basic case in tests/server/test_conventions.py; here: no /v1 route
is left open (every path of the OpenAPI document is tried), odd Authorization headers are
401 problems and never 5xx, tokens are compared exactly, and a write through the admin
endpoints with the reader role's URL is refused by PostgreSQL (503 problem, not 500).
"""

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from server.auth_oidc import OidcSettings
from server.settings import AuthSettings
from tests.security.oidc_issuer import AUDIENCE, ISSUER, Issuer
from tests.server.conftest import open_client, reader_url, server_settings
from tests.services import Services

pytestmark = pytest.mark.db

TOKEN = "tl-" + uuid.uuid4().hex
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
async def client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    auth = AuthSettings(enabled=True, static_tokens=[SecretStr(TOKEN)])
    async with open_client(server_settings(database_url, admin=True, auth=auth)) as api:
        yield api


def _operations(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (method.upper(), path.replace("{", "").replace("}", ""))
        for path, item in document["paths"].items()
        for method in item
        if path.startswith("/v1/")
    ]


async def test_every_v1_operation_requires_the_token(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operations = _operations(document)
    assert len(operations) >= 20
    for method, path in operations:
        # Placeholders stay as text ("dataset_id"): auth must answer before validation does.
        response = await client.request(method, path, json={})
        assert response.status_code == 401, (method, path, response.status_code)
        assert response.headers["content-type"] == PROBLEM
        assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "header",
    [
        "",
        "Bearer",
        "Bearer ",
        f"Basic {TOKEN}",
        f"Token {TOKEN}",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN.upper()}",
        f"Bearer  {TOKEN}x",
        "Bearer " + "A" * 60_000,
        "Bearer \u00e9\u00e8",
        f"Bearer {TOKEN},{TOKEN}",
    ],
)
async def test_bad_authorization_headers_are_401(client: httpx.AsyncClient, header: str) -> None:
    raw = header.encode("utf-8")
    response = await client.get("/v1/datasets", headers=[(b"Authorization", raw)])
    assert response.status_code == 401, response.text
    assert response.headers["content-type"] == PROBLEM


async def test_token_elsewhere_than_the_header_is_ignored(client: httpx.AsyncClient) -> None:
    for params in ({"access_token": TOKEN}, {"token": TOKEN}):
        assert (await client.get("/v1/datasets", params=params)).status_code == 401
    cookie = await client.get("/v1/datasets", headers={"Cookie": f"token={TOKEN}"})
    assert cookie.status_code == 401


async def test_the_right_token_in_any_scheme_case(client: httpx.AsyncClient) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        response = await client.get("/v1/datasets", headers={"Authorization": f"{scheme} {TOKEN}"})
        assert response.status_code == 200, scheme
    assert (await client.get("/health")).status_code == 200


@pytest.fixture(scope="module")
async def location_id(engine: AsyncEngine) -> int:
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2025-05-05T10:00:00Z",
        "producer": "https://example.com/threadline-security",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "security-reader", "name": "reader_write_probe"},
        "outputs": [{"namespace": "s3://security-reader-bucket", "name": "probe"}],
    }
    result = await ingest_payloads(engine, [json.dumps(event).encode()])
    assert not result.rejects
    async with engine.connect() as conn:
        row = await conn.exec_driver_sql(
            "SELECT id FROM location WHERE name = 'security-reader-bucket'"
        )
        return int(row.scalar_one())


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PATCH", "/v1/locations/{id}", {"external_id": "reader-was-here"}),
        ("POST", "/v1/locations/{id}/addresses", {"url": "s3://reader-was-here"}),
    ],
)
async def test_reader_role_cannot_write_through_the_admin_endpoints(
    database_url: str,
    test_services: Services,
    location_id: int,
    method: str,
    path: str,
    body: dict[str, str],
) -> None:
    """Even with the admin URL misconfigured to the reader role, PostgreSQL refuses the write."""
    reader = reader_url(database_url, test_services)
    settings = server_settings(reader, server={"admin_database_url": SecretStr(reader)})
    async with open_client(settings) as api:
        response = await api.request(method, path.format(id=location_id), json=body)
        assert response.status_code == 503, response.text
        assert response.headers["content-type"] == PROBLEM
        assert response.json()["type"].endswith("/db-permission")
        detail = (await api.get(f"/v1/locations/{location_id}")).json()
    assert detail["external_id"] is None
    assert all("reader-was-here" not in a["url"] for a in detail["addresses"])


async def test_oidc_tokens_through_the_served_app(
    database_url: str, issuer: tuple[Issuer, str]
) -> None:
    """auth.oidc wired into the /v1 dependency: a JWKS-signed JWT passes, a forged one does not,
    and the static tokens keep working beside it."""
    state, jwks_url = issuer
    oidc = OidcSettings.model_validate(
        {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": jwks_url}
    )
    auth = AuthSettings(enabled=True, static_tokens=[SecretStr(TOKEN)], oidc=oidc)
    async with open_client(server_settings(database_url, auth=auth)) as api:
        for token, status in [
            (state.token(), 200),
            (state.token("ec-1", state.ec_key, "ES256"), 200),
            (TOKEN, 200),
            (state.token(aud="another-api"), 401),
            (state.token(exp=int(time.time()) - 600), 401),
            (state.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048)), 401),
        ]:
            response = await api.get("/v1/datasets", headers={"Authorization": f"Bearer {token}"})
            assert response.status_code == status, response.text[:300]
