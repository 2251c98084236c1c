#!/usr/bin/env bash
# Create .venv with the pinned dependency set (requirements.lock) and Threadline itself,
# its native decode + extract (native/) included.
# Idempotent: a second run only checks that the environment matches the lock (and
# re-creates .venv if it was made from another interpreter than the one chosen below).
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

# .venv's interpreter: THREADLINE_PYTHON when given, else the distribution's own CPython 3.11
# when the machine has one, else python3. Debian's is built with PGO and LTO and links the
# interpreter into its executable; pyenv's builds here are shared libraries without either.
# On the benchmark machine Debian's took 22-31% less time on pure-Python loops, 6-11% less
# on the largest lineage graphs and 4-12% less consumer CPU per event (benchmarks/README.md,
# "Thirty-ninth set"). The Docker image's python:3.11-slim is an optimised build too.
interpreter() {
  local candidate=$PYTHON
  if [[ -z ${THREADLINE_PYTHON:-} && -x /usr/bin/python3.11 ]]; then
    candidate=/usr/bin/python3.11
  fi
  "$candidate" -c 'import os, sys; print(os.path.realpath(sys.executable))'
}
VENV_PYTHON="$(interpreter)"  # $PYTHON, checked above, or a 3.11 by its name
# A .venv made from another interpreter is made again (the steps below refill it).
if [[ -x .venv/bin/python ]]; then
  made_from="$(.venv/bin/python -c 'import os, sys; print(os.path.realpath(sys._base_executable))')"
  if [[ $made_from != "$VENV_PYTHON" ]]; then
    log "re-creating .venv: made from $made_from, now $VENV_PYTHON"
    rm -rf .venv
  fi
fi
[[ -x .venv/bin/python ]] || "${UV[@]}" venv --quiet --python "$VENV_PYTHON" .venv
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
