#!/usr/bin/env bash
# Everything the e2e tier (tests/e2e) needs besides the services, idempotently:
#
#  1. pyspark (requirements-e2e.lock) into .venv, next to requirements.lock. `scripts/install.sh`
#     syncs .venv to requirements.lock exactly and so removes it again: run this script
#     after install.sh (scripts/test.sh does).
#  2. Airflow + its OpenLineage provider (requirements-e2e-airflow.lock) in a virtualenv of
#     their own, $THREADLINE_AIRFLOW_VENV (default ~/.cache/threadline/airflow-venv): Airflow
#     pins fastapi<0.137, requirements.lock has fastapi 0.165.
#  3. A migrated Airflow metadata database (SQLite) kept in that virtualenv as a template,
#     so a test run copies it instead of migrating (10-30 s) every time.
#  4. The Spark jars (openlineage-spark, kafka-clients, postgresql) via scripts/spark-jars.sh.
#
#   scripts/install-e2e.sh          install / check
#   scripts/install-e2e.sh --lock   re-pin requirements-e2e*.lock from the .in files (uv)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${THREADLINE_PYTHON:-python3}"
CACHE_DIR="$(realpath -m "${THREADLINE_CACHE_DIR:-${HOME:-/root}/.cache/threadline}")"
AIRFLOW_VENV="$(realpath -m "${THREADLINE_AIRFLOW_VENV:-$CACHE_DIR/airflow-venv}")"
log() { printf '[install-e2e] %s\n' "$*" >&2; }

"$PYTHON" -m uv --version >/dev/null 2>&1 || "$PYTHON" -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
UV=("$PYTHON" -m uv)

lock() {
  "${UV[@]}" pip compile --quiet --python-version 3.11 requirements-e2e.in \
    -c requirements.lock -o requirements-e2e.lock
  "${UV[@]}" pip compile --quiet --python-version 3.11 requirements-e2e-airflow.in \
    -o requirements-e2e-airflow.lock
  log "pinned requirements-e2e.lock and requirements-e2e-airflow.lock"
}

# pyspark ships as an sdist; uv builds its wheel once and then installs it from its cache.
install_pyspark() {
  [[ -x .venv/bin/python ]] || scripts/install.sh
  "${UV[@]}" pip install --quiet --python .venv/bin/python -r requirements-e2e.lock
}

# A fresh throwaway AIRFLOW_HOME, migrated; its airflow.db becomes the template.
airflow_template() {
  local home
  home="$(mktemp -d)"
  AIRFLOW_HOME="$home" AIRFLOW__CORE__LOAD_EXAMPLES=False \
    AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="sqlite:///$home/airflow.db" \
    "$AIRFLOW_VENV/bin/airflow" db migrate >"$home/migrate.log" 2>&1 ||
    { tail -n 30 "$home/migrate.log" >&2; rm -rf "$home"; log "airflow db migrate failed"; exit 1; }
  mv "$home/airflow.db" "$AIRFLOW_VENV/threadline-template.db"
  rm -rf "$home"
}

install_airflow() {
  local marker="$AIRFLOW_VENV/.threadline-lock" want
  want="$(sha256sum <requirements-e2e-airflow.lock | cut -c1-64) $("$PYTHON" -V 2>&1)"
  if [[ -f $marker && $(<"$marker") == "$want" && -f $AIRFLOW_VENV/threadline-template.db ]]; then
    return 0
  fi
  log "Airflow virtualenv $AIRFLOW_VENV (first run, or the lock changed)"
  mkdir -p "$(dirname "$AIRFLOW_VENV")"
  exec 7>"$AIRFLOW_VENV.lock"
  flock -w 600 7 || { log "another install-e2e.sh holds $AIRFLOW_VENV.lock"; exit 1; }
  [[ -x $AIRFLOW_VENV/bin/python ]] ||
    "${UV[@]}" venv --quiet --python "$(command -v "$PYTHON")" "$AIRFLOW_VENV"
  "${UV[@]}" pip sync --quiet --python "$AIRFLOW_VENV/bin/python" requirements-e2e-airflow.lock
  airflow_template
  printf '%s\n' "$want" >"$marker"
  exec 7>&-
}

main() {
  if [[ ${1:-} == --lock ]]; then
    lock
    return 0
  fi
  local start=$SECONDS
  install_pyspark
  install_airflow
  scripts/spark-jars.sh >/dev/null
  log "ready in $((SECONDS - start))s: pyspark in .venv, Airflow in $AIRFLOW_VENV, Spark jars cached"
}

main "$@"
