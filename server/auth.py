"""Bearer-token authentication for the /v1 API: static tokens, and OIDC JWTs when configured."""

import hmac
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from server.auth_oidc import OidcVerifier
from server.errors import ProblemError
from server.settings import AuthSettings


class UnauthorizedError(ProblemError):
    status, title, kind = 401, "Unauthorized", "unauthorized"
    headers = {"WWW-Authenticate": "Bearer"}  # noqa: RUF012 - read-only class constant


# auto_error=False: a missing header is ours to answer (401 problem), and the scheme shows
# in the OpenAPI document whether or not auth is enabled in this deployment.
bearer = HTTPBearer(auto_error=False, description="A static token, or an OIDC access token (JWT).")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def make_auth_dependency(settings: AuthSettings) -> Callable[..., Awaitable[None]]:
    """A router dependency closed over the accepted tokens; a no-op when auth is disabled."""
    tokens = [t.get_secret_value().encode() for t in settings.static_tokens if t.get_secret_value()]
    verifier = OidcVerifier(settings.oidc) if settings.oidc is not None else None

    def is_static(given: bytes) -> bool:
        # compare_digest against every token: the time taken does not reveal which matched.
        return any([hmac.compare_digest(given, token) for token in tokens])  # noqa: C419

    async def require_token(credentials: Credentials) -> None:
        if not settings.enabled:
            return
        given = credentials.credentials if credentials else ""
        if given and is_static(given.encode()):
            return
        if given and verifier is not None and await verifier.accepts(given):
            return
        raise UnauthorizedError("a valid `Authorization: Bearer <token>` header is required")

    return require_token
