"""README's configuration reference is generated from the settings classes; keep it current."""

import os
from pathlib import Path

import pytest

from consumer.settings import ConsumerSettings
from scripts.settings_doc import render
from shared.settings import unknown_env_names

pytestmark = pytest.mark.unit

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_every_variable() -> None:
    text = README.read_text()
    begin, end = "<!-- settings:begin -->\n", "<!-- settings:end -->"
    embedded = text[text.index(begin) + len(begin) : text.index(end)]
    assert embedded == render(), (
        "run: .venv/bin/python -m scripts.settings_doc and paste into README"
    )


def test_misspelt_section_fails_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADLINE__KAFAK__TOPIC", "x")
    with pytest.raises(ValueError, match="THREADLINE__KAFAK__TOPIC"):
        ConsumerSettings()


def test_misspelt_field_fails_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREADLINE__KAFKA__TOPICC", "x")
    with pytest.raises(ValueError, match="topicc"):
        ConsumerSettings()


def test_other_process_sections_are_tolerated() -> None:
    assert unknown_env_names({"THREADLINE__SERVER__PORT": "1", "PATH": "/"}, {"server"}) == set()
    assert os.environ.get("THREADLINE__KAFAK__TOPIC") is None
