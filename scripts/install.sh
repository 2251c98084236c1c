#!/usr/bin/env bash
# Create .venv with the pinned dependency set (requirements.lock) and Threadline itself,
# its native decode + extract (native/) included.
# Idempotent: a second run only checks that the environment matches the lock.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${THREADLINE_PYTHON:-python3}"
log() { printf '[install] %s\n' "$*" >&2; }

"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || { log "Python 3.11+ is required"; exit 1; }
# uv resolves and installs from PyPI only (no interpreter downloads: we pass ours).
if ! "$PYTHON" -m uv --version >/dev/null 2>&1; then
  log "installing uv (PyPI)"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
fi
UV=("$PYTHON" -m uv)
[[ -x .venv/bin/python ]] || "${UV[@]}" venv --quiet --python "$(command -v "$PYTHON")" .venv
"${UV[@]}" pip sync --quiet --python .venv/bin/python requirements.lock
"${UV[@]}" pip install --quiet --python .venv/bin/python --no-deps -e .
# The native decode + extract (native/, Rust; consumer/native.py): maturin from PyPI, crates
# from crates.io, built with the machine's cargo (rustup puts it in ~/.cargo/bin). cargo
# keeps its build in native/target, so a second run only relinks when nothing changed.
[[ -x $HOME/.cargo/bin/cargo ]] && PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null 2>&1 \
  || { log "cargo (a Rust toolchain, 1.82+) is required to build native/"; exit 1; }
"${UV[@]}" pip install --quiet --python .venv/bin/python --no-deps ./native
log "ready: $ROOT/.venv"
