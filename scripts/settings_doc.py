"""Print the configuration reference (every THREADLINE__ variable) as a Markdown table.

README.md embeds this output between the `settings:begin` / `settings:end` markers;
tests/unit/test_settings_doc.py fails when the two drift apart.
"""

import sys
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic_settings import BaseSettings

from consumer.settings import ConsumerSettings
from server.settings import ServerSettings
from shared.migrate import MigrateSettings
from shared.settings import ENV_DELIMITER, ENV_PREFIX

PROCESSES: tuple[tuple[str, type[BaseSettings]], ...] = (
    ("consumer", ConsumerSettings),
    ("server", ServerSettings),
    ("migrate", MigrateSettings),
)


def _default(value: Any) -> str:
    if isinstance(value, SecretStr):
        return "(secret)" if value.get_secret_value() else "''"
    if isinstance(value, BaseModel):
        return ""
    return f"`{value!r}`"


def rows() -> dict[str, tuple[set[str], str, str]]:
    """env name -> (processes, default, description)."""
    table: dict[str, tuple[set[str], str, str]] = {}
    for process, settings in PROCESSES:
        for section, field in settings.model_fields.items():
            model = field.annotation
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                continue
            for name, sub in model.model_fields.items():
                env = f"{ENV_PREFIX}{section.upper()}{ENV_DELIMITER}{name.upper()}"
                default = _default(sub.get_default(call_default_factory=True))
                users = table.get(env, (set(), "", ""))[0] | {process}
                table[env] = (users, default, (sub.description or "").replace("|", "\\|"))
    return table


def render() -> str:
    lines = ["| variable | used by | default | meaning |", "|---|---|---|---|"]
    for env, (users, default, description) in sorted(rows().items()):
        lines.append(f"| `{env}` | {', '.join(sorted(users))} | {default} | {description} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
