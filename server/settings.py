"""Server settings: `THREADLINE__DATABASE__*`, `THREADLINE__SERVER__*`, `THREADLINE__LOG__*`,
`THREADLINE__AUTH__*` (see `shared.settings` for the naming rule)."""

from pydantic import Field, SecretStr, model_validator

from server.auth_oidc import OidcSettings
from shared.settings import DatabaseSettings, LogSettings, RootSettings, Section


class ServerOptions(Section):
    host: str = Field(default="127.0.0.1", description="Interface the HTTP server binds to.")
    port: int = Field(default=8000, ge=1, le=65535, description="TCP port of the HTTP server.")
    cors_origins: list[str] = Field(
        default_factory=list,
        description='Origins allowed by CORS, as a JSON list (["https://ui.example"]); '
        "empty disables CORS, ['*'] allows any origin without credentials.",
    )
    max_lineage_nodes: int = Field(
        default=2000,
        ge=1,
        le=1_000_000,
        description="Hard cap on nodes in one lineage graph; beyond it the graph is truncated "
        "and flagged `truncated` instead of timing out.",
    )
    max_lineage_depth: int = Field(
        default=50, ge=1, le=100, description="Largest lineage depth a request may ask for."
    )
    max_page_size: int = Field(
        default=500, ge=1, le=10_000, description="Largest `limit` a list request may ask for."
    )
    default_page_size: int = Field(
        default=50, ge=1, le=10_000, description="Page size when a list request gives no `limit`."
    )
    request_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="A request still running after this many seconds is answered 504.",
    )
    search_threshold: float = Field(
        default=0.4,
        ge=0.05,
        le=1.0,
        description="Minimum pg_trgm word similarity for a fuzzy name-search match (0-1).",
    )
    admin_database_url: SecretStr | None = Field(
        default=None,
        description="SQLAlchemy URL (postgresql+asyncpg) of a role that may write, used only by "
        "the location admin endpoints (addresses, external id, merge). Unset: those "
        "endpoints answer 503 and the server holds no writing connection at all. "
        "Env: THREADLINE__SERVER__ADMIN_DATABASE_URL.",
    )

    @model_validator(mode="after")
    def _default_fits(self) -> "ServerOptions":
        if self.default_page_size > self.max_page_size:
            raise ValueError("default_page_size must not exceed max_page_size")
        return self


class AuthSettings(Section):
    enabled: bool = Field(
        default=False,
        description="Require `Authorization: Bearer <token>` on every /v1 endpoint "
        "(/health and the OpenAPI document stay open).",
    )
    static_tokens: list[SecretStr] = Field(
        default_factory=list,
        description='Accepted bearer tokens, as a JSON list (["t1","t2"]); several allow '
        "rotation without downtime.",
    )

    oidc: OidcSettings | None = Field(
        default=None,
        description="Also accept OIDC JWTs verified against the issuer's JWKS "
        "(THREADLINE__AUTH__OIDC__ISSUER, __AUDIENCE, __JWKS_URL...); unset: static tokens only.",
    )

    @model_validator(mode="after")
    def _tokens_when_enabled(self) -> "AuthSettings":
        has_static = any(t.get_secret_value() for t in self.static_tokens)
        if self.enabled and not has_static and self.oidc is None:
            raise ValueError(
                "auth.enabled needs a non-empty auth.static_tokens entry or auth.oidc settings"
            )
        return self


class ServerSettings(RootSettings):
    """Everything `threadline-server` reads; built once in `server.__main__`."""

    database: DatabaseSettings = Field(
        default_factory=DatabaseSettings,
        description="The read-only connection (role threadline_reader in production).",
    )
    server: ServerOptions = Field(
        default_factory=ServerOptions, description="HTTP, paging and limits."
    )
    log: LogSettings = Field(default_factory=LogSettings, description="Logging.")
    auth: AuthSettings = Field(default_factory=AuthSettings, description="API authentication.")
