#!/usr/bin/env bash
# Depth-3 lineage under concurrent clients, both systems alternated in rounds (twenty-first set).
# Needs the 40k databases of depth3_rounds.sh (bench_tl_40k, bench_dr_40k).
#   benchmarks/concurrency_rounds.sh [ROUNDS] [RESULT] [BASELINE_CHECKOUT]
# Per round and number of clients (CLIENTS, default "1 4 8"): Threadline, the baseline
# checkout's Threadline server if one is given (its sources run on this tree's environment:
# api.py's --server-from), then Data.Rentgen; each over the same start nodes: per start kind
# (START_KINDS, default "DATASET"; also JOB and RUN) at the granularities depth3_rounds.sh asks
# of it. The clients share the start nodes, each asking for the next when answered: a case's
# requests per second is the server's throughput.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
ROUNDS="${1:-3}"
RESULT="${2:-benchmarks/results/api-40k-depth3-concurrency.json}"
BASELINE="${3:-}"
read -ra CLIENTS <<<"${CLIENTS:-1 4 8}"
read -ra STARTS <<<"${START_KINDS:-DATASET}"
declare -A GRANULARITIES=([DATASET]="RUN JOB DATASET" [JOB]="JOB RUN" [RUN]="RUN OPERATION")
variants=(threadline)
if [[ -n $BASELINE ]]; then variants+=(baseline); fi
variants+=(data-rentgen)
OUT="$(mktemp -d)"
for round in $(seq "$ROUNDS"); do
  for clients in "${CLIENTS[@]}"; do
    for start in "${STARTS[@]}"; do
      read -ra granularities <<<"${GRANULARITIES[$start]}"
      for variant in "${variants[@]}"; do
        system=threadline database=bench_tl_40k extra=(--max-nodes 1000000)
        case $variant in
          baseline) extra+=(--server-from "$BASELINE") ;;
          data-rentgen) system=data-rentgen database=bench_dr_40k extra=() ;;
        esac
        $PY -m benchmarks.api --system "$system" --database "$database" \
          --starts-from bench_tl_40k --events-in-database 40029 --samples "${SAMPLES:-60}" \
          --depths 3 --start-kind "$start" --granularities "${granularities[@]}" \
          --concurrency "$clients" "${extra[@]}" --out "$OUT/$round-$clients-$start-$variant.json"
      done
    done
  done
done
$PY -m benchmarks.rounds "$OUT" "$RESULT" \
  "depth 3, 40k events; per round, number of clients and start kind Threadline, its baseline, Data.Rentgen" \
  clients start variant
rm -r "$OUT"
