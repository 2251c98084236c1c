# shellcheck shell=bash disable=SC2153  # globals come from lib/common.sh
# Kafka (KRaft, single node acting as broker + controller) for scripts/services.sh.
# Jars come from Maven Central via scripts/kafka/pom.xml, cached in $KAFKA_HOME.

KAFKA_PIDFILE="$KAFKA_STATE/kafka.pid"
KAFKA_LOG="$KAFKA_STATE/kafka.log"
KAFKA_PROPS="$KAFKA_STATE/server.properties"
KAFKA_DATA="$KAFKA_STATE/data"

# Resolve the jars once per (pom, version). The marker holds a hash of both, so
# editing the pom re-resolves while a warm cache never touches Maven.
kafka_resolve_jars() {
  local marker="$KAFKA_HOME/.resolved" want tmp
  want="$(sha256sum <"$KAFKA_POM" | cut -c1-64) $KAFKA_VERSION"
  if [[ -f $marker && $(<"$marker") == "$want" && -d $KAFKA_LIBS ]]; then return 0; fi
  command -v mvn >/dev/null || apt_install maven
  mkdir -p "$KAFKA_HOME"
  tmp="$KAFKA_HOME/libs.tmp.$$"
  rm -rf "$tmp"
  log "resolving Kafka $KAFKA_VERSION jars from Maven Central into $KAFKA_LIBS (first run only) ..."
  # The pom is copied out of the repo so Maven never drops a target/ dir there;
  # its local repository lives in the cache dir so one directory holds all.
  cp "$KAFKA_POM" "$KAFKA_HOME/pom.xml"
  if ! mvn -B -Dstyle.color=never -f "$KAFKA_HOME/pom.xml" \
      -Dmaven.repo.local="$CACHE_DIR/m2" -Dkafka.version="$KAFKA_VERSION" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" \
      >"$KAFKA_HOME/mvn.log" 2>&1; then
    tail -n 40 "$KAFKA_HOME/mvn.log" >&2
    rm -rf "$tmp"
    die "maven could not resolve Kafka $KAFKA_VERSION (full output: $KAFKA_HOME/mvn.log)"
  fi
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
  printf '%s\n' "$want" >"$marker"
}

# Pid of the broker we started, if it is still that broker: the pid file alone
# could point at a recycled pid, so the command line must name our config too.
kafka_pid() {
  local pid
  pid="$(live_pid "$KAFKA_PIDFILE")" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "kafka.Kafka $KAFKA_PROPS" || return 1
  printf '%s\n' "$pid"
}

# While kafka_wait waits: whether the JVM this launch started still runs (alive, and not a
# zombie its parent has yet to reap). kafka_pid also matches the command line, which guards
# against a pid file from an earlier boot whose pid was recycled; this launch wrote the pid
# file seconds ago. A CI run once reported a broker as exited here while its log showed it
# serving a consumer group, so an exit is declared only when the process is gone too.
kafka_launched_running() {
  local pid state
  pid="$(live_pid "$KAFKA_PIDFILE")" || return 1
  state="$(awk '$1 == "State:" { print $2 }' "/proc/$pid/status" 2>/dev/null)" || return 1
  [[ -n $state && $state != [ZX] ]] || return 1
  log "kafka pid $pid runs (state $state) but its command line did not match; still waiting"
}

kafka_write_config() {
  cat >"$KAFKA_PROPS" <<EOF
# Written by scripts/services.sh on every start; edits are overwritten.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DATA
auto.create.topics.enable=true
num.partitions=4
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
message.max.bytes=33554432
replica.fetch.max.bytes=33554432
socket.request.max.bytes=104857600
# After a SIGKILL the new incarnation is refused (DUPLICATE_BROKER_REGISTRATION)
# until the old one's session expires: 9 s by default, shortened for crash tests.
broker.session.timeout.ms=6000
broker.heartbeat.interval.ms=1000
EOF
  # THREADLINE_KAFKA_EXTRA_PROPERTIES: more server.properties lines, appended last so
  # they can also override the ones above (a later key wins), e.g. the SASL/SSL listeners
  # of tests/security. Unset by default: the shared broker is plain PLAINTEXT.
  if [[ -n ${THREADLINE_KAFKA_EXTRA_PROPERTIES:-} ]]; then
    printf '%s\n' "# From THREADLINE_KAFKA_EXTRA_PROPERTIES:" "$THREADLINE_KAFKA_EXTRA_PROPERTIES" >>"$KAFKA_PROPS"
  fi
  # Console appender: nohup sends stdout+stderr (JVM crashes included) to kafka.log.
  cat >"$KAFKA_STATE/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
# Per-partition state changes and request logs would swamp the log in tests.
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.controller=INFO
EOF
}

# Format the log dirs once. The cluster id is kept in cluster.id so a restart
# (or a re-format after deleting data/) reuses it; existing data is never touched.
kafka_format() {
  local id_file="$KAFKA_STATE/cluster.id"
  [[ -f $KAFKA_DATA/meta.properties ]] && return 0
  [[ -s $id_file ]] || kafka_tool kafka.tools.StorageTool random-uuid >"$id_file"
  log "formatting KRaft storage (cluster id $(<"$id_file"))"
  kafka_tool kafka.tools.StorageTool format --ignore-formatted \
    -t "$(<"$id_file")" -c "$KAFKA_PROPS" >&2 || die "kafka storage format failed"
}

# Launch the broker in the background and return at once (kafka_wait waits):
# services.sh sets up PostgreSQL while the JVM boots.
kafka_launch() {
  if kafka_pid >/dev/null; then log "kafka already running (pid $(kafka_pid))"; return 0; fi
  local p
  for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
    port_open "$p" && die "port $p is already in use by another process (set THREADLINE_KAFKA_PORT / THREADLINE_KAFKA_CONTROLLER_PORT)"
  done
  find_java
  kafka_resolve_jars
  mkdir -p "$KAFKA_DATA"
  kafka_write_config
  kafka_format
  rm -f "$KAFKA_PIDFILE"
  log "starting kafka $KAFKA_VERSION on 127.0.0.1:$KAFKA_PORT (log: $KAFKA_LOG)"
  # The JVM is sized for a small box that also runs the consumer and PostgreSQL
  # (benchmarks/README.md, "Thirty-eighth set"). A fixed heap, and G1 regions of 16 MiB:
  # with 1 MiB regions each 1 MiB produce buffer is a humongous object that starts a
  # concurrent cycle (~0.7 CPU-s of GC threads per 20k-event benchmark run in a broker's bad
  # spells). C1 only: with C2 a new broker's first run cost ~0.25-0.45 CPU-s more (its C2
  # thread alone 0.1-0.27 per run), CPU the consumer and PostgreSQL needed; the broker's own
  # work is socket and file I/O, measured no slower under C1. THREADLINE_KAFKA_JVM_OPTS
  # replaces these flags.
  local -a jvm
  read -ra jvm <<<"${THREADLINE_KAFKA_JVM_OPTS:--Xms512m -Xmx512m -XX:+UseG1GC -XX:G1HeapRegionSize=16M -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1}"
  # setsid: own session, so a Ctrl-C or a test runner killing our process group
  # leaves the broker alone. The inner bash writes its own pid and then execs
  # (nohup, then java), so the pid file names the JVM even if setsid forked.
  # 9>&-: the daemon must not inherit services.sh's lock fd (it would hold the lock forever).
  # shellcheck disable=SC2016  # $$ and $1 are for the inner bash
  setsid bash -c 'echo $$ >"$1"; shift; exec nohup "$@"' _ "$KAFKA_PIDFILE" \
    "$JAVA" "${jvm[@]}" \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Djava.net.preferIPv4Stack=true \
    -Dlog4j.configuration="file:$KAFKA_STATE/log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS" </dev/null >>"$KAFKA_LOG" 2>&1 9>&- &
  local _
  for _ in $(seq 50); do [[ -s $KAFKA_PIDFILE ]] && break; sleep 0.1; done
  KAFKA_LAUNCHED_AT=$SECONDS
}

# Ready = the listener accepts connections AND a metadata request (topic list)
# succeeds. Fails fast if the JVM dies, with the tail of its log.
kafka_wait() {
  [[ -n ${KAFKA_LAUNCHED_AT:-} ]] || return 0   # was already running
  local timeout="${THREADLINE_KAFKA_START_TIMEOUT:-90}" start=$KAFKA_LAUNCHED_AT left
  kafka_tool_cmd
  while :; do
    left=$((timeout - (SECONDS - start)))
    if ! kafka_pid >/dev/null && ! kafka_launched_running; then
      tail -n 40 "$KAFKA_LOG" >&2 || true
      log "pid file: $(cat "$KAFKA_PIDFILE" 2>/dev/null || echo missing)"
      rm -f "$KAFKA_PIDFILE"
      die "kafka exited during startup (log above, full log: $KAFKA_LOG)"
    fi
    if ((left <= 0)); then
      tail -n 40 "$KAFKA_LOG" >&2 || true
      die "kafka not ready after ${timeout}s (still running as pid $(kafka_pid); log: $KAFKA_LOG)"
    fi
    if port_open "$KAFKA_PORT" && timeout "$((left < 20 ? left : 20))" "${KAFKA_TOOL[@]}" \
        org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --list >/dev/null 2>&1; then
      log "kafka ready after $((SECONDS - start))s (pid $(kafka_pid))"
      return 0
    fi
    sleep 0.5
  done
}

# SIGTERM triggers a controlled shutdown (flushes logs); SIGKILL after 30 s.
kafka_stop() {
  local pid _
  if ! pid="$(kafka_pid)"; then
    log "kafka not running"
    rm -f "$KAFKA_PIDFILE"
    return 0
  fi
  log "stopping kafka (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "kafka did not stop within 30s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$KAFKA_PIDFILE"
}

kafka_status() {
  local pid
  if pid="$(kafka_pid)"; then
    log "kafka: running (pid $pid, 127.0.0.1:$KAFKA_PORT)"
  else
    log "kafka: stopped"
    return 1
  fi
}
