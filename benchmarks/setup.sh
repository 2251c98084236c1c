#!/usr/bin/env bash
# One-time setup of the benchmark's own services and tools (nothing here touches .venv).
#   benchmarks/setup.sh            # start Kafka 39092/39093 + PostgreSQL 57432, tools venv
#   benchmarks/setup.sh stop       # stop the benchmark's services
#   benchmarks/setup.sh restart-postgres   # empty PostgreSQL's buffer cache (depth3_rounds.sh COLD=1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export THREADLINE_STATE_DIR="${THREADLINE_STATE_DIR:-/tmp/threadline-bench}"
export THREADLINE_KAFKA_PORT=39092 THREADLINE_KAFKA_CONTROLLER_PORT=39093 THREADLINE_PG_PORT=57432
if [[ ${1:-start} == stop ]]; then exec scripts/services.sh stop; fi
if [[ ${1:-start} == restart-postgres ]]; then exec scripts/services.sh restart postgres; fi
[[ -x .venv/bin/python ]] || scripts/install.sh
# Durable PostgreSQL settings (fsync on, no THREADLINE_PG_FAST): what production would run.
scripts/services.sh start >/dev/null
TOOLS="${BENCH_TOOLS_VENV:-/tmp/bench-tools}"
if [[ ! -x $TOOLS/bin/py-spy ]]; then
  python3.11 -m venv "$TOOLS" 2>/dev/null || "$(command -v python3)" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q py-spy==0.4.3 pyinstrument==5.1.3
fi
benchmarks/rentgen/setup.sh
mkdir -p /tmp/bench-data
for n in 20000 40000; do
  f=/tmp/bench-data/events-$((n / 1000))k.ndjson
  [[ -f $f.meta.json ]] || .venv/bin/python -m benchmarks.generate --events "$n" --seed 1 --out "$f"
done
# The 20k stream again with other run ids: UUIDv4, and UUIDv7 new to the 1M database.
for ids in v4 v7-fresh; do
  f=/tmp/bench-data/events-20k-$ids.ndjson
  [[ -f $f.meta.json ]] || .venv/bin/python -m benchmarks.generate --events 20000 --seed 1 \
    --run-ids "$ids" --out "$f"
done
echo "benchmark services and tools ready" >&2
