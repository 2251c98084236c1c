"""OIDC JWT verification (server/auth_oidc.py) against a real JWKS served on loopback.

Accepted: a token signed by a JWKS key, right issuer and audience, not expired. Refused:
expired, not yet valid, wrong issuer/audience, unknown or rotated-out key, tampered
payload, `alg: none`, HS256 signed with the public key (key confusion), missing exp,
missing scope; a JWKS outage keeps the last keys; unknown key ids do not hammer the JWKS.
"""

import asyncio
import base64
import hashlib
import hmac
import time
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import ValidationError

from server.auth_oidc import OidcSettings, OidcVerifier
from tests.security.oidc_issuer import AUDIENCE, ISSUER, Issuer

pytestmark = pytest.mark.unit


def verifier(url: str, **overrides: Any) -> OidcVerifier:
    settings = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": url, **overrides}
    return OidcVerifier(OidcSettings.model_validate(settings))


async def test_valid_rsa_and_ec_tokens_are_accepted(issuer: tuple[Issuer, str]) -> None:
    state, url = issuer
    check = verifier(url)
    claims = await check.verify(state.token())
    assert claims["sub"] == "alice"
    assert await check.accepts(state.token("ec-1", state.ec_key, "ES256"))


def _refused_tokens(state: Issuer) -> dict[str, str]:
    now = int(time.time())
    good = state.token()
    header, payload, signature = good.split(".")
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = state.rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    forged_body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 300}
    return {
        "expired": state.token(exp=now - 3600, iat=now - 7200),
        "not yet valid": state.token(nbf=now + 3600),
        "wrong issuer": state.token(iss="https://evil.example"),
        "wrong audience": state.token(aud="someone-else"),
        "no exp": state.token(exp=None),
        "unknown kid": state.token(kid="rsa-9"),
        "signed by another key": state.token(key=other_key),
        "tampered payload": f"{header}.{payload[:-4]}AAAA.{signature}",
        "alg none": _forged(forged_body, "none", None),
        "HS256 with the public key": _forged(forged_body, "HS256", public_pem),
        "ec key claims RS256": state.token("ec-1", other_key, "RS256"),
        "not a JWT": "s3cret-static-token",
        "empty": "",
    }


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forged(body: dict[str, Any], alg: str, secret: bytes | None) -> str:
    """Hand-made forgeries: `alg: none` (no signature), or HS256 keyed with the RSA public
    key (the classic key-confusion attack on verifiers that trust the header's alg)."""
    head = _b64(orjson.dumps({"alg": alg, "typ": "JWT", "kid": "rsa-1"}))
    signing_input = f"{head}.{_b64(orjson.dumps(body))}"
    if secret is None:
        return f"{signing_input}."
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


@pytest.mark.parametrize(
    "kind",
    [
        "expired",
        "not yet valid",
        "wrong issuer",
        "wrong audience",
        "no exp",
        "unknown kid",
        "signed by another key",
        "tampered payload",
        "alg none",
        "HS256 with the public key",
        "ec key claims RS256",
        "not a JWT",
        "empty",
    ],
)
async def test_bad_tokens_are_refused(issuer: tuple[Issuer, str], kind: str) -> None:
    state, url = issuer
    assert not await verifier(url).accepts(_refused_tokens(state)[kind])


async def test_required_scope(issuer: tuple[Issuer, str]) -> None:
    state, url = issuer
    check = verifier(url, required_scope="lineage:read")
    assert await check.accepts(state.token(scope="openid lineage:read"))
    assert await check.accepts(state.token(scp=["lineage:read"]))
    assert not await check.accepts(state.token(scope="openid lineage:write"))
    assert not await check.accepts(state.token())


async def test_key_rotation_is_picked_up(issuer: tuple[Issuer, str]) -> None:
    state, url = issuer
    check = verifier(url, jwks_min_refresh_s=0)
    assert await check.accepts(state.token())
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    state.publish(("rsa-2", new_key))
    assert await check.accepts(state.token("rsa-2", new_key))
    assert not await check.accepts(state.token())  # rsa-1 is gone from the JWKS


async def test_unknown_kids_do_not_hammer_the_jwks(issuer: tuple[Issuer, str]) -> None:
    state, url = issuer
    check = verifier(url, jwks_min_refresh_s=60)
    assert await check.accepts(state.token())
    before = state.fetches
    for n in range(50):
        assert not await check.accepts(state.token(kid=f"made-up-{n}"))
    assert state.fetches == before


async def test_jwks_outage_keeps_the_known_keys(issuer: tuple[Issuer, str]) -> None:
    state, url = issuer
    check = verifier(url, jwks_cache_s=1, jwks_min_refresh_s=0)
    assert await check.accepts(state.token())
    state.down = True
    await asyncio.sleep(1.1)
    assert await check.accepts(state.token())  # refetch failed; the cached key still verifies


def test_settings_refuse_symmetric_algorithms_and_plain_http() -> None:
    base = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": "https://login.example/jwks"}
    with pytest.raises(ValidationError, match="asymmetric"):
        OidcSettings.model_validate({**base, "algorithms": ["HS256"]})
    with pytest.raises(ValidationError, match="asymmetric"):
        OidcSettings.model_validate({**base, "algorithms": ["none"]})
    with pytest.raises(ValidationError, match="https"):
        OidcSettings.model_validate({**base, "jwks_url": "http://login.example/jwks"})
    assert OidcSettings.model_validate({**base, "jwks_url": "http://127.0.0.1:9/jwks"})
