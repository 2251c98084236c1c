#!/usr/bin/env bash
# Ingest of both systems, alternated in rounds so all see the same machine: per round
# Threadline with one and two consumers, its Python path (THREADLINE__CONSUMER__NATIVE_EXTRACT
# =false), optionally an earlier Threadline checkout, then Data.Rentgen with one consumer.
#   benchmarks/ingest_rounds.sh [ROUNDS] [RESULT] [EVENTS_FILE] [BASELINE_CHECKOUT]
# BASELINE_CHECKOUT: another checkout of Threadline with its own .venv (scripts/install.sh
# there), e.g. `git worktree add /tmp/tl-old <rev>`: its consumer and migrations run in each
# round too, under this harness (env.py: BENCH_THREADLINE_VENV).
# Needs the benchmark services (setup.sh) and Data.Rentgen's venv (rentgen/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS="${1:-3}"
RESULT="$(realpath -m "${2:-benchmarks/results/ingest-rounds.json}")"
EVENTS="${3:-/tmp/bench-data/events-20k.ndjson}"
BASELINE="${4:-}"
HERE="$(git rev-parse --short HEAD)"
run() {  # label, ingest arguments...
  local label=$1
  shift
  .venv/bin/python -m benchmarks.ingest --events-file "$EVENTS" --out "$RESULT" \
    --label "$label" "$@"
}
for round in $(seq "$ROUNDS"); do
  run "round $round: threadline $HERE, 1 consumer" --system threadline --consumers 1
  if [[ -n $BASELINE ]]; then
    base="$(git -C "$BASELINE" rev-parse --short HEAD)"
    BENCH_THREADLINE_VENV="$BASELINE/.venv" \
      run "round $round: threadline $base, 1 consumer" --system threadline --consumers 1
  fi
  run "round $round: threadline $HERE, 2 consumers" --system threadline --consumers 2
  THREADLINE__CONSUMER__NATIVE_EXTRACT=false \
    run "round $round: threadline $HERE, Python path, 1 consumer" --system threadline --consumers 1
  run "round $round: data-rentgen, 1 consumer" --system data-rentgen --consumers 1
done
