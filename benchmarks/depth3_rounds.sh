#!/usr/bin/env bash
# Depth-3 lineage of both systems, alternated in rounds so both see the same machine:
# per round Threadline (dataset, job and run start nodes), then Data.Rentgen (the same).
# Needs the 40k databases of run_all.sh (bench_tl_40k) and rentgen/run.sh (bench_dr_40k).
#   benchmarks/depth3_rounds.sh [ROUNDS] [RESULT]
#   RESULT defaults to benchmarks/results/api-40k-depth3-rounds.json (the fifth set's file:
#   name another to keep it, as the sixth set's -b524bb6.json does).
#   CLIENT_GC="frozen default" measures each system both ways in every round (api.py's
#   --client-gc; default: frozen, the eighteenth set's way).
#   COLUMN_LINEAGE=1 asks both systems for column lineage too (api.py's --column-lineage).
#   CLIENT="httpx raw" measures each system with both HTTP clients in every round (api.py's
#   --client; default: httpx, every set before the twenty-fourth), raw first in even rounds.
#   DEPTHS="1 3" asks for each of those depths (api.py's --depths; default 3).
#   OPERATIONS=1 adds OPERATION granularity from the dataset start nodes and operation start
#   nodes (twenty-fourth set; Data.Rentgen's /v1/operations/lineage).
#   DIRECTION=DOWNSTREAM or UPSTREAM asks for one direction (api.py's --direction; default
#   BOTH, every set before the twenty-third).
#   WARMUP=30 warms each case with that many of its start nodes first (api.py's --warmup;
#   default 3, every set before the thirty-second): 30 asks for every graph once before any
#   is timed, so that neither system's first requests read pages another database evicted.
#   COLD=1 restarts PostgreSQL before each system's turn in each round (an empty buffer
#   cache, as after measurements on the 1M databases; the files stay in the OS's cache).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
ROUNDS="${1:-3}"
RESULT="${2:-benchmarks/results/api-40k-depth3-rounds.json}"
read -ra MODES <<<"${CLIENT_GC:-frozen}"
read -ra CLIENTS <<<"${CLIENT:-httpx}"
read -ra DEPTH_LIST <<<"${DEPTHS:-3}"
columns=()
if [[ -n ${COLUMN_LINEAGE:-} ]]; then columns=(--column-lineage); fi
OUT="$(mktemp -d)"
for round in $(seq "$ROUNDS"); do
  for system in threadline data-rentgen; do
    if [[ -n ${COLD:-} ]]; then env -u THREADLINE_STATE_DIR benchmarks/setup.sh restart-postgres >/dev/null; fi
    database=bench_dr_40k extra=()
    if [[ $system == threadline ]]; then database=bench_tl_40k extra=(--max-nodes 1000000); fi
    for mode in "${MODES[@]}"; do
      clients=("${CLIENTS[@]}")
      if ((round % 2 == 0)); then  # the other order: each client as often first as second
        for ((i = ${#CLIENTS[@]} - 1, j = 0; i >= 0; i--, j++)); do clients[j]=${CLIENTS[i]}; done
      fi
      for client in "${clients[@]}"; do
        common=(--system "$system" --database "$database" --starts-from bench_tl_40k
          --events-in-database 40029 --samples 30 --depths "${DEPTH_LIST[@]}" --client-gc "$mode"
          --client "$client" "${extra[@]}" --direction "${DIRECTION:-BOTH}" "${columns[@]}"
          --warmup "${WARMUP:-3}")
        name="$OUT/$round-$system-$mode-$client"
        $PY -m benchmarks.api "${common[@]}" --out "$name-dataset.json"
        $PY -m benchmarks.api "${common[@]}" --start-kind JOB --granularities JOB RUN \
          --out "$name-job.json"
        $PY -m benchmarks.api "${common[@]}" --start-kind RUN --granularities RUN OPERATION \
          --out "$name-run.json"
        if [[ -n ${OPERATIONS:-} ]]; then
          $PY -m benchmarks.api "${common[@]}" --granularities OPERATION \
            --out "$name-dataset-operation.json"
          $PY -m benchmarks.api "${common[@]}" --start-kind OPERATION --granularities OPERATION \
            --out "$name-operation.json"
        fi
      done
    done
  done
done
$PY -m benchmarks.rounds "$OUT" "$RESULT" \
  "depth ${DEPTHS:-3}, 40k events, 30 start nodes, direction ${DIRECTION:-BOTH}, warm-up ${WARMUP:-3} start nodes per case${COLD:+, PostgreSQL restarted before each system turn}; per round Threadline then Data.Rentgen"
rm -r "$OUT"
