"""`threadline-migrate`: apply Alembic migrations, then grant the read-only role."""

import argparse
import asyncio
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

import migrations
from shared.settings import DatabaseSettings, LogSettings, RootSettings

log = logging.getLogger("threadline.migrate")


class MigrateSettings(RootSettings):
    database: DatabaseSettings = DatabaseSettings()
    log: LogSettings = LogSettings()


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at the installed `migrations` package."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def grant_reader(url: str, role: str) -> None:
    """Give the server's role SELECT on every table (no-op when the role does not exist)."""
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("SELECT threadline_grant_reader(:role)"), {"role": role})
    await engine.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="threadline-migrate", description=__doc__)
    parser.add_argument("action", choices=["upgrade", "downgrade", "current"], nargs="?")
    parser.add_argument("revision", nargs="?", default=None)
    args = parser.parse_args(argv)
    settings = MigrateSettings()
    logging.basicConfig(level=settings.log.level, format="%(asctime)s %(levelname)s %(message)s")
    url = settings.database.url.get_secret_value()
    config = alembic_config(url)
    action = args.action or "upgrade"
    if action == "upgrade":
        command.upgrade(config, args.revision or "head")
        if settings.database.reader_role:
            asyncio.run(grant_reader(url, settings.database.reader_role))
    elif action == "downgrade":
        command.downgrade(config, args.revision or "base")
    else:
        command.current(config)


if __name__ == "__main__":
    main()
