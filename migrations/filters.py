"""What Alembic's autogenerate compares: the models, not the partitions made at run time."""

import re
from typing import Any

# Quarterly (monthly before migration 0011) and default partitions are created by
# `threadline_ensure_partition`, not declared as models: autogenerate must not report
# them as extra tables.
PARTITION_NAME = re.compile(r"_(y\d{4}(m\d{2}|q\d)|default)(_|$)")


def include_object(
    obj: Any,
    name: str | None,
    type_: str,
    reflected: bool,  # noqa: FBT001 - Alembic's callback signature
    compare_to: Any,
) -> bool:
    """False for partition tables (and their indexes) that exist only in the database."""
    if type_ == "table" and name and PARTITION_NAME.search(name):
        return False
    return not (type_ == "index" and reflected and name and PARTITION_NAME.search(name))
