"""Server settings from the environment: nested names, JSON lists, secrets, strictness."""

import pytest

from server.settings import AuthSettings, ServerOptions, ServerSettings

pytestmark = pytest.mark.unit


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "THREADLINE__DATABASE__URL": "postgresql+asyncpg://threadline_reader:pw@db:5432/t",
        "THREADLINE__SERVER__PORT": "9000",
        "THREADLINE__SERVER__CORS_ORIGINS": '["https://ui.example"]',
        "THREADLINE__SERVER__ADMIN_DATABASE_URL": "postgresql+asyncpg://admin:pw@db:5432/t",
        "THREADLINE__AUTH__ENABLED": "true",
        "THREADLINE__AUTH__STATIC_TOKENS": '["t1", "t2"]',
        "THREADLINE__KAFKA__BOOTSTRAP_SERVERS": "kafka:9092",  # the consumer's: tolerated
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = ServerSettings()
    assert settings.server.port == 9000
    assert settings.server.cors_origins == ["https://ui.example"]
    assert settings.server.admin_database_url is not None
    assert "pw" not in repr(settings)
    assert [t.get_secret_value() for t in settings.auth.static_tokens] == ["t1", "t2"]


@pytest.mark.parametrize(
    "name",
    ["THREADLINE__SERVER__PROT", "THREADLINE__SERVR__PORT", "THREADLINE__AUTH__TOKENS"],
)
def test_misspelt_setting_fails_at_start(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "1")
    with pytest.raises(ValueError, match=r"PROT|SERVR|tokens|TOKENS|extra"):
        ServerSettings()


def test_every_field_is_described() -> None:
    for model in (ServerSettings, ServerOptions, AuthSettings):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
