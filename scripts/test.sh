#!/usr/bin/env bash
# The whole test suite: install, quality gates, real services, every pytest tier.
# Services this script starts are stopped again at the end; running ones are reused.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '\n[test] %s\n' "$*" >&2; }

scripts/install.sh
# e2e tier: pyspark into .venv, Airflow in a venv of its own, Spark listener jars (cached).
# Before the gates: mypy reads tests/e2e and examples, which import pyspark.
scripts/install-e2e.sh
BIN=.venv/bin

log "quality gates: ruff, mypy (strict), import-linter"
"$BIN/ruff" check .
"$BIN/ruff" format --check .
"$BIN/mypy" .
"$BIN/lint-imports"

started=0
if ! scripts/services.sh status >/dev/null 2>&1; then
  log "starting PostgreSQL and Kafka"
  export THREADLINE_PG_FAST=1
  started=1
fi
trap '[[ $started == 1 ]] && scripts/services.sh stop >/dev/null 2>&1 || true' EXIT
# Assigned first: `eval "$(…)"` alone would hide a failed start (a port in use) and run
# every tier against no services.
service_env="$(scripts/services.sh start)"
eval "$service_env"

log "pytest: unit, db, kafka and e2e tiers"
# A tier whose services are missing fails (never skips); exit code 5 (no tests) fails too.
"$BIN/python" -m pytest -m "unit or db or kafka or e2e" "$@"
