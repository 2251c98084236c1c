#!/usr/bin/env bash
# Depth-5 lineage on the 1M-event databases of both systems, alternated in rounds so both see
# the same machine. Needs bench_threadline_1m (benchmarks.seed) and bench_dr_1m (rentgen/run_1m.sh).
#   benchmarks/depth5_1m_rounds.sh [ROUNDS] [RESULT]
# Per round and window (last 7 days, then all history): Threadline with no node cap (the
# semantics Data.Rentgen has), Threadline with the server's default cap of 2,000 nodes (what
# production answers), then Data.Rentgen. All history at RUN granularity returns graphs of
# 10k-60k nodes that take Data.Rentgen 10-20 s each, so that case asks for the first 10 of
# the 30 start datasets (the same seeded sample's first ten).
#   DEPTHS="1 3 5 10" asks for each of those depths (api.py's --depths; default 5).
#   RUN_WARMUP=10 asks each of the 10 all-history RUN graphs once before timing (api.py's
#   --warmup; default 1): a fresh server's first request for a large graph pays for its
#   PostgreSQL backend's first touch of the shared buffers it reads (thirty-fourth set).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
ROUNDS="${1:-3}"
RESULT="${2:-benchmarks/results/api-1m-depth5-rounds.json}"
read -ra DEPTH_LIST <<<"${DEPTHS:-5}"
OUT="$(mktemp -d)"
for round in $(seq "$ROUNDS"); do
  for window in 7d all; do
    when=()
    if [[ $window == 7d ]]; then when=(--window-days 7); fi
    for variant in threadline-uncapped threadline-capped data-rentgen; do
      system=threadline database=bench_threadline_1m extra=()
      case $variant in
        threadline-uncapped) extra=(--max-nodes 1000000) ;;
        data-rentgen) system=data-rentgen database=bench_dr_1m ;;
      esac
      common=(--system "$system" --database "$database" --starts-from bench_threadline_1m
        --events-in-database 1000013 --depths "${DEPTH_LIST[@]}" "${when[@]}" "${extra[@]}")
      if [[ $window == all ]]; then
        $PY -m benchmarks.api "${common[@]}" --samples 30 --granularities JOB DATASET \
          --out "$OUT/$round-$window-$variant-small.json"
        $PY -m benchmarks.api "${common[@]}" --samples 10 --warmup "${RUN_WARMUP:-1}" --granularities RUN \
          --out "$OUT/$round-$window-$variant-run.json"
      else
        $PY -m benchmarks.api "${common[@]}" --samples 30 --out "$OUT/$round-$window-$variant.json"
      fi
    done
  done
done
$PY -m benchmarks.rounds "$OUT" "$RESULT" \
  "depth ${DEPTHS:-5}, 1,000,013 events; per round and window Threadline (no cap, cap 2,000) then Data.Rentgen" \
  window variant
rm -r "$OUT"
