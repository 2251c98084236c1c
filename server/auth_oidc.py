"""OIDC bearer tokens for the read API: JWTs verified against the issuer's JWKS.

A token is accepted only if its signature verifies with a key from the configured
JWKS URL (asymmetric algorithms only: a JWKS holds public keys, so HS* and "none"
are refused outright, which also rules out the RS256 -> HS256 key-confusion attack),
`iss` and `aud` match the settings, `exp` is present and in the future and `nbf`
(if any) in the past, give or take `leeway_s`. With `required_scope` set, the token's
`scope` (space-separated) or `scp` (list) must contain it.

Keys are cached for `jwks_cache_s`; a token signed with an unknown `kid` triggers a
refetch (key rotation), at most once per `jwks_min_refresh_s`, so a flood of tokens
with made-up key ids cannot turn the server into a JWKS-fetching amplifier.

Usage from the auth dependency (`server.auth`):

    verifier = OidcVerifier(settings.oidc)          # once, when the app is built
    if await verifier.accepts(token): ...           # per request; never raises
"""

import asyncio
import logging
import time
import urllib.request
from typing import Any

import jwt
import orjson
from pydantic import Field, HttpUrl, field_validator

from shared.settings import Section

log = logging.getLogger("threadline.server.auth")

ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
JWKS_MAX_BYTES = 1 << 20
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
# Which algorithms a JWK's key type can verify (RFC 7518 / RFC 8037).
FAMILIES = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("EdDSA",)}


class _Key:
    """A verification key and the algorithm its JWK pins (None: any of its key type)."""

    __slots__ = ("jwk", "key_type", "pinned")

    def __init__(self, jwk: jwt.PyJWK, key_type: str, pinned: str | None) -> None:
        self.jwk, self.key_type, self.pinned = jwk, key_type, pinned


class OidcSettings(Section):
    """`THREADLINE__AUTH__OIDC__*`: accept JWTs from one OpenID Connect issuer."""

    issuer: str = Field(
        description="Expected `iss` claim, e.g. https://login.example.com/realms/x."
    )
    audience: str = Field(description="Expected `aud` claim (the API's client id or audience).")
    jwks_url: HttpUrl = Field(description="The issuer's JWKS document (its `jwks_uri`).")
    algorithms: list[str] = Field(
        default_factory=lambda: ["RS256", "ES256"],
        description="Accepted signature algorithms; asymmetric ones only (RS*, PS*, ES*, EdDSA).",
    )
    required_scope: str | None = Field(
        default=None, description="A scope every token must carry (`scope` or `scp`), if set."
    )
    leeway_s: int = Field(default=30, ge=0, le=300, description="Clock skew allowed on exp/nbf.")
    jwks_cache_s: int = Field(default=300, ge=1, description="How long fetched keys are trusted.")
    jwks_min_refresh_s: float = Field(
        default=30.0, ge=0, description="Least time between two JWKS fetches for unknown key ids."
    )
    jwks_timeout_s: float = Field(default=5.0, gt=0, description="Timeout of one JWKS fetch.")

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, value: list[str]) -> list[str]:
        unsafe = set(value) - ASYMMETRIC
        if unsafe or not value:
            raise ValueError(f"must be asymmetric algorithms; refused: {sorted(unsafe)}")
        return value

    @field_validator("jwks_url")
    @classmethod
    def _https_unless_loopback(cls, value: HttpUrl) -> HttpUrl:
        # Keys fetched over plain HTTP could be swapped by anyone on the path.
        if value.scheme != "https" and value.host not in LOOPBACK:
            raise ValueError("must be https:// (plain http only for a loopback test issuer)")
        return value


class OidcError(ValueError):
    """Why a token was refused (logged, never sent to the client)."""


class OidcVerifier:
    def __init__(self, settings: OidcSettings) -> None:
        self.settings = settings
        self.keys: dict[str, _Key] = {}
        self.fetched_at = float("-inf")
        self.lock = asyncio.Lock()

    async def accepts(self, token: str) -> bool:
        """True for a valid token; False (with the reason logged) for any other string."""
        try:
            await self.verify(token)
        except OidcError as exc:
            log.info("bearer token refused: %s", exc)
            return False
        return True

    async def verify(self, token: str) -> dict[str, Any]:
        """The token's claims once signature, issuer, audience, times and scope check out."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise OidcError(f"not a JWT: {exc}") from None
        algorithm = header.get("alg")
        if algorithm not in self.settings.algorithms:
            raise OidcError(f"algorithm {str(algorithm)[:20]!r} is not accepted")
        key = await self._key(header.get("kid"), algorithm)
        claims = self._decode(token, key, algorithm)
        self._check_scope(claims)
        return claims

    def _decode(self, token: str, key: _Key, algorithm: str) -> dict[str, Any]:
        s = self.settings
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.jwk.key,
                algorithms=[algorithm],
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            # TypeError/ValueError: a key the algorithm cannot use; never a 500.
            raise OidcError(f"{type(exc).__name__}: {exc}") from None
        return claims

    def _check_scope(self, claims: dict[str, Any]) -> None:
        wanted = self.settings.required_scope
        if wanted is None:
            return
        scope = claims.get("scope")
        granted = scope.split() if isinstance(scope, str) else claims.get("scp")
        if not isinstance(granted, list) or wanted not in granted:
            raise OidcError(f"scope {wanted!r} missing")

    async def _key(self, kid: object, algorithm: str) -> _Key:
        if kid is not None and not isinstance(kid, str):
            raise OidcError("kid must be a string")
        async with self.lock:
            now = time.monotonic()
            stale = now - self.fetched_at > self.settings.jwks_cache_s
            unknown = kid not in self.keys
            if stale or (unknown and now - self.fetched_at > self.settings.jwks_min_refresh_s):
                await self._refresh()
        return self._pick(kid, algorithm)

    def _pick(self, kid: str | None, algorithm: str) -> _Key:
        if kid is None:
            if len(self.keys) != 1:
                raise OidcError("token has no kid and the JWKS holds several keys")
            key = next(iter(self.keys.values()))
        elif (found := self.keys.get(kid)) is not None:
            key = found
        else:
            raise OidcError(f"unknown key id {kid[:64]!r}")
        if key.pinned is not None and key.pinned != algorithm:
            raise OidcError(f"key {kid!r} is for {key.pinned}, the token says {algorithm}")
        if not algorithm.startswith(FAMILIES.get(key.key_type, ("-",))):
            raise OidcError(f"key {kid!r} is a {key.key_type} key, the token says {algorithm}")
        return key

    async def _refresh(self) -> None:
        try:
            document = await asyncio.to_thread(self._fetch)
        except (OSError, ValueError) as exc:
            # Keep the keys we had: an unreachable issuer must not log every user out.
            self.fetched_at = time.monotonic()
            log.warning("JWKS fetch from %s failed: %s", self.settings.jwks_url, exc)
            return
        entries = document.get("keys")
        keys = (_parse_key(e) for e in entries) if isinstance(entries, list) else ()
        self.keys = {
            key.jwk.key_id or f"#{i}": key for i, key in enumerate(keys) if key is not None
        }
        self.fetched_at = time.monotonic()

    def _fetch(self) -> dict[str, Any]:
        url = str(self.settings.jwks_url)
        # S310: the URL is an http(s) HttpUrl by its type, never file:// or custom schemes.
        request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310
        with urllib.request.urlopen(request, timeout=self.settings.jwks_timeout_s) as response:  # noqa: S310
            body = response.read(JWKS_MAX_BYTES + 1)
        if len(body) > JWKS_MAX_BYTES:
            raise ValueError("JWKS document larger than 1 MiB")
        document = orjson.loads(body)
        if not isinstance(document, dict):
            raise ValueError("JWKS document is not an object")
        return document


def _parse_key(entry: object) -> _Key | None:
    """A signing key of the JWKS, or None for one we cannot or may not use."""
    if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
        return None
    pinned = entry.get("alg")
    if pinned is not None and pinned not in ASYMMETRIC:
        return None
    try:
        jwk = jwt.PyJWK(entry)
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    return _Key(jwk, str(entry.get("kty")), pinned if isinstance(pinned, str) else None)
