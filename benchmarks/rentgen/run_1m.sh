#!/usr/bin/env bash
# Data.Rentgen's 1M-event database, built by its own consumers from Kafka (two processes:
# ~21 minutes on the tenth set's VM), from the same seeded stream benchmarks.seed writes
# into bench_threadline_1m. The run's ingest numbers go to results/ingest-data-rentgen-1m.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PY=.venv/bin/python
EVENTS=/tmp/bench-data/events-1m.ndjson  # 3.6 GB; the harness holds it in memory (~5 GB)
[[ -f $EVENTS.meta.json ]] || $PY -m benchmarks.generate --events 1000000 --seed 1 --out "$EVENTS"
$PY -m benchmarks.ingest --system data-rentgen --consumers 2 --events-file "$EVENTS" \
  --database bench_dr_1m --out benchmarks/results/ingest-data-rentgen-1m.json
