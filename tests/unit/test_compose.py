"""docker-compose.yml cannot run here (no Docker engine): keep it consistent by reading it."""

import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from pydantic_settings import BaseSettings

from consumer.settings import ConsumerSettings
from server.settings import ServerSettings
from shared.migrate import MigrateSettings
from shared.settings import ENV_DELIMITER, ENV_PREFIX

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SETTINGS: dict[str, type[BaseSettings]] = {
    "migrate": MigrateSettings,
    "consumer": ConsumerSettings,
    "server": ServerSettings,
}


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def console_scripts() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(project["project"]["scripts"])


def known(settings: type[BaseSettings], name: str) -> bool:
    """Whether THREADLINE__SECTION__FIELD names a field of the settings class."""
    parts = name[len(ENV_PREFIX) :].lower().split(ENV_DELIMITER)
    model: type[BaseModel] = settings
    for part in parts:
        field = model.model_fields.get(part)
        if field is None:
            return False
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return True


def test_services_are_all_there() -> None:
    assert set(compose()["services"]) == {"kafka", "postgres", "migrate", "consumer", "server"}


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_commands_are_our_console_scripts(service: str) -> None:
    command = compose()["services"][service]["command"]
    assert command[0] in console_scripts()
    assert command[0] == f"threadline-{service}"


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_env_names_are_settings_fields(service: str) -> None:
    env = compose()["services"][service]["environment"]
    names = [n for n in env if n.startswith(ENV_PREFIX)]
    assert names, f"{service} sets no Threadline variables"
    unknown = [n for n in names if not known(SETTINGS[service], n)]
    assert unknown == []


def test_consumer_replicas_are_settable() -> None:
    assert "${THREADLINE_CONSUMERS" in str(compose()["services"]["consumer"]["deploy"]["replicas"])


def test_kafka_runs_in_kraft_mode() -> None:
    env = compose()["services"]["kafka"]["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
