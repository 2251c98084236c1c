#!/usr/bin/env bash
# Data.Rentgen in its own virtualenv (0.7.x needs Python >= 3.12): $RENTGEN_VENV, default
# /tmp/rentgen-venv. Uses the first python3.12+ that runs (system, then pyenv; 3.12 first, the
# version the README's numbers were taken with). pyenv's shims exist for versions that are
# not selected, and fail when run: `command -v` alone is not enough.
set -euo pipefail
VENV="${RENTGEN_VENV:-/tmp/rentgen-venv}"
VERSION="${RENTGEN_VERSION:-0.7.2}"
if [[ -x $VENV/bin/python ]] && "$VENV/bin/python" -c "import data_rentgen" 2>/dev/null; then exit 0; fi
PY=""
for candidate in python3.12 python3.13 /root/.pyenv/versions/3.12*/bin/python3 /root/.pyenv/versions/3.13*/bin/python3; do
  if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
    PY="$(command -v "$candidate")"
    break
  fi
done
[[ -n $PY ]] || { echo "no Python >= 3.12 found (apt-get install python3.12 or pyenv install 3.12)" >&2; exit 1; }
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "data-rentgen[server,consumer,postgres]==$VERSION"
"$VENV/bin/pip" freeze >"$(dirname "${BASH_SOURCE[0]}")/requirements-freeze.txt"
echo "Data.Rentgen $VERSION in $VENV ($("$VENV/bin/python" --version))" >&2
