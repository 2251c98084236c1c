#!/usr/bin/env bash
# Real Kafka (KRaft) + PostgreSQL for local development and tests, on 127.0.0.1
# only, no Docker. Everything lives under $THREADLINE_STATE_DIR (default
# <repo>/.state); Kafka jars are cached under $THREADLINE_CACHE_DIR (default
# ~/.cache/threadline) and resolved from Maven Central only once.
#
#   scripts/services.sh start|stop|restart|status|env [kafka|postgres]
#   eval "$(scripts/services.sh env)"
#
# stdout carries only `export NAME=value` lines (from `env` and at the end of
# `start`/`restart`); all progress and errors go to stderr.
#
# Knobs: THREADLINE_KAFKA_PORT (19092), THREADLINE_KAFKA_CONTROLLER_PORT (19093),
# THREADLINE_PG_PORT (55432), THREADLINE_PG_FAST=1 (fsync off, for tests),
# THREADLINE_KAFKA_VERSION (3.9.1), THREADLINE_KAFKA_START_TIMEOUT (90 s).
# Ports are read on every call: use the same values for start, env and stop.
set -euo pipefail

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/kafka.sh
source "$THREADLINE_ROOT/scripts/lib/kafka.sh"
# shellcheck source=lib/postgres.sh
source "$THREADLINE_ROOT/scripts/lib/postgres.sh"

usage() {
  echo "usage: $0 start|stop|restart|status|env [kafka|postgres]" >&2
  exit 2
}

print_env() {
  local pg="threadline:threadline@127.0.0.1:$PG_PORT"
  printf 'export %s=%q\n' \
    THREADLINE__DATABASE__URL "postgresql+asyncpg://$pg/threadline" \
    THREADLINE__KAFKA__BOOTSTRAP_SERVERS "127.0.0.1:$KAFKA_PORT" \
    THREADLINE_SERVICES_PG_ADMIN_URL "postgresql://$pg/postgres" \
    THREADLINE_SERVICES_READER_USER threadline_reader \
    THREADLINE_SERVICES_READER_PASSWORD threadline_reader \
    THREADLINE_SERVICES_KAFKA_LIBS "$KAFKA_LIBS" \
    THREADLINE_SERVICES_STATE_DIR "$STATE_DIR"
}

# start/stop/restart from two shells at once must not interleave.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/.services.lock"
  flock -w 300 9 || die "another services.sh holds $STATE_DIR/.services.lock"
}

# Kafka is launched first and waited for last: its JVM boots (5-10 s) while
# PostgreSQL is being started. (Plain if-blocks, not `cond && fn`: errexit is
# suspended inside a function called from an && list.)
do_start() {
  if [[ $want_kafka == 1 ]]; then kafka_launch; fi
  if [[ $want_pg == 1 ]]; then pg_start; fi
  if [[ $want_kafka == 1 ]]; then kafka_wait; fi
  print_env
}

do_stop() {
  if [[ $want_kafka == 1 ]]; then kafka_stop; fi
  if [[ $want_pg == 1 ]]; then pg_stop; fi
}

do_status() {
  local rc=0
  if [[ $want_kafka == 1 ]]; then kafka_status || rc=3; fi
  if [[ $want_pg == 1 ]]; then pg_status || rc=3; fi
  return "$rc"
}

main() {
  [[ $# -ge 1 && $# -le 2 ]] || usage
  want_kafka=1 want_pg=1
  case "${2:-}" in
    "") ;;
    kafka) want_pg=0 ;;
    postgres) want_kafka=0 ;;
    *) usage ;;
  esac
  case "$1" in
    start) take_lock; do_start ;;
    stop) take_lock; do_stop ;;
    restart) take_lock; do_stop; do_start ;;
    status) do_status ;;
    env) print_env ;;
    *) usage ;;
  esac
}

main "$@"
