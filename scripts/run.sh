#!/usr/bin/env bash
# Run Threadline locally: PostgreSQL + Kafka, migrations, topics, consumer and read API.
#   scripts/run.sh            start everything, print the URLs, stay in the foreground (Ctrl-C stops
#                             the consumer and the server; services keep running)
#   scripts/run.sh --detach   start everything and return
#   scripts/run.sh stop       stop the consumer, the server and the services this project started
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STATE="${THREADLINE_STATE_DIR:-$ROOT/.state}/app"
TOPIC="${THREADLINE__KAFKA__TOPIC:-openlineage}"
DEAD_LETTER="${THREADLINE__KAFKA__DEAD_LETTER_TOPIC:-$TOPIC.dead-letter}"
SERVER_PORT="${THREADLINE__SERVER__PORT:-8000}"
log() { printf '[run] %s\n' "$*" >&2; }

stop_app() {
  local name pid
  for name in consumer server; do
    if [[ -r $STATE/$name.pid ]] && pid=$(<"$STATE/$name.pid") && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" && log "stopped $name (pid $pid)"
    fi
    rm -f "$STATE/$name.pid"
  done
}

if [[ ${1:-} == stop ]]; then
  stop_app
  scripts/services.sh stop
  exit 0
fi

scripts/install.sh
# Assigned first: `eval "$(…)"` alone would hide a failed start (a port in use).
service_env="$(scripts/services.sh start)"
eval "$service_env"
mkdir -p "$STATE"
for t in "$TOPIC" "$DEAD_LETTER"; do
  scripts/kafka-topics.sh --create --if-not-exists --topic "$t" --partitions 8 \
    --config max.message.bytes=33554432 >/dev/null
done
log "migrating the database"
.venv/bin/threadline-migrate upgrade head

stop_app
# The server reads through the read-only role; the consumer writes as the owner.
READER_URL="postgresql+asyncpg://$THREADLINE_SERVICES_READER_USER:$THREADLINE_SERVICES_READER_PASSWORD@${THREADLINE__DATABASE__URL#*@}"
nohup .venv/bin/threadline-consumer >"$STATE/consumer.log" 2>&1 &
echo $! >"$STATE/consumer.pid"
THREADLINE__DATABASE__URL="$READER_URL" \
THREADLINE__SERVER__ADMIN_DATABASE_URL="${THREADLINE__SERVER__ADMIN_DATABASE_URL:-$THREADLINE__DATABASE__URL}" \
  nohup .venv/bin/threadline-server >"$STATE/server.log" 2>&1 &
echo $! >"$STATE/server.pid"

for _ in $(seq 1 60); do
  curl -fs "http://127.0.0.1:$SERVER_PORT/health" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fs "http://127.0.0.1:$SERVER_PORT/health" >/dev/null || { log "server did not start:"; tail -20 "$STATE/server.log" >&2; exit 1; }

cat <<MSG
Threadline is running.
  Read API:        http://127.0.0.1:$SERVER_PORT   (OpenAPI: http://127.0.0.1:$SERVER_PORT/docs)
  Send events to:  Kafka topic '$TOPIC' at $THREADLINE__KAFKA__BOOTSTRAP_SERVERS
  Dead letters:    Kafka topic '$DEAD_LETTER'
  Consumer:        metrics http://127.0.0.1:9108/metrics, health http://127.0.0.1:9108/health
  Logs:            $STATE/consumer.log, $STATE/server.log
  Stop:            scripts/run.sh stop
MSG

[[ ${1:-} == --detach ]] && exit 0
trap 'stop_app; exit 0' INT TERM
log "running in the foreground; Ctrl-C stops the consumer and the server"
wait
