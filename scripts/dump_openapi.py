"""Write the server's OpenAPI document to docs/openapi.json (or --check that it is current).

Usage: .venv/bin/python scripts/dump_openapi.py [--check]
The document does not depend on settings or on a database: nothing is connected.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from server.app import create_app
from server.settings import ServerSettings

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"


def openapi_document() -> dict[str, Any]:
    return create_app(ServerSettings()).openapi()


def render(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    fresh = render(openapi_document())
    if args.check:
        current = DOCUMENT.read_bytes() if DOCUMENT.exists() else b""
        if current != fresh:
            sys.stderr.write(f"{DOCUMENT} is stale: run scripts/dump_openapi.py\n")
            return 1
        return 0
    DOCUMENT.parent.mkdir(parents=True, exist_ok=True)
    DOCUMENT.write_bytes(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
