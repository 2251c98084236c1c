"""Settings parts both processes compose: database, logging, and strict env-name checking.

Every variable is `THREADLINE__<SECTION>__<FIELD>`; each process has one root
settings class built from these parts (see `consumer.settings`, `server.settings`).
"""

import os
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "THREADLINE__"
ENV_DELIMITER = "__"

# Sections owned by some Threadline process. A process checks its own sections
# strictly (extra="forbid") and only tolerates the others' names, so one shell
# environment can drive the consumer and the server side by side while a
# misspelt section or field still fails at start-up.
KNOWN_SECTIONS = frozenset({"database", "kafka", "consumer", "metrics", "log", "server", "auth"})

DEFAULT_DATABASE_URL = "postgresql+asyncpg://threadline:threadline@127.0.0.1:55432/threadline"


class Section(BaseModel):
    """Base for one settings section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DatabaseSettings(Section):
    url: SecretStr = Field(
        default=SecretStr(DEFAULT_DATABASE_URL),
        description="SQLAlchemy URL of the PostgreSQL database (driver postgresql+asyncpg).",
    )
    pool_size: int = Field(
        default=5,
        ge=1,
        le=200,
        description="Connections kept in each engine's pool (the server has two read engines).",
    )
    max_overflow: int = Field(
        default=5,
        ge=0,
        le=200,
        description="Extra connections on demand, per engine; the server's lineage engine "
        "opens all its connections at start-up and keeps them.",
    )
    statement_timeout_ms: int = Field(
        default=60_000, ge=0, description="Per-statement timeout in milliseconds (0 = none)."
    )
    echo: bool = Field(
        default=False,
        description="Log the SQL statements sent through SQLAlchemy (debugging only); the "
        "consumer's writes and the lineage queries run on asyncpg directly and are not logged.",
    )
    reader_role: str | None = Field(
        default="threadline_reader",
        description="Role granted read-only access by threadline-migrate (the server's role).",
    )

    @property
    def most_connections(self) -> int:
        """The most connections one engine opens at once: its pool and the overflow."""
        return self.pool_size + self.max_overflow


class LogSettings(Section):
    level: str = Field(default="INFO", description="Root log level (DEBUG, INFO, WARNING, ...).")
    json_format: bool = Field(
        default=True, description="Structured JSON lines (False: plain text)."
    )


class RootSettings(BaseSettings):
    """Base for a process's root settings: env prefix, nested delimiter, strict names."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_DELIMITER,
        extra="forbid",
        frozen=True,
    )
    known_sections: ClassVar[frozenset[str]] = KNOWN_SECTIONS

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_env_names(cls, data: Any) -> Any:
        unknown = unknown_env_names(os.environ, cls.known_sections)
        if unknown:
            names = ", ".join(sorted(unknown))
            raise ValueError(f"unknown Threadline setting(s): {names}")
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if k in cls.model_fields}
        return data


def unknown_env_names(environ: Mapping[str, str], sections: Iterable[str]) -> set[str]:
    """Env names with our prefix whose section no Threadline process knows."""
    known = {s.upper() for s in sections}
    bad = set()
    for name in environ:
        if not name.startswith(ENV_PREFIX):
            continue
        section = name[len(ENV_PREFIX) :].split(ENV_DELIMITER, 1)[0]
        if section not in known:
            bad.add(name)
    return bad
