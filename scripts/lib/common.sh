# shellcheck shell=bash disable=SC2034  # variables are used by the sourcing scripts
# Shared settings and helpers for scripts/services.sh and scripts/kafka-topics.sh.
# Sourced, never executed. All diagnostics go to stderr: stdout of services.sh
# is reserved for `export NAME=value` lines (eval "$(scripts/services.sh env)").

THREADLINE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# realpath -m: absolute even when THREADLINE_STATE_DIR is relative or not created yet.
STATE_DIR="$(realpath -m "${THREADLINE_STATE_DIR:-$THREADLINE_ROOT/.state}")"
CACHE_DIR="$(realpath -m "${THREADLINE_CACHE_DIR:-${HOME:-/root}/.cache/threadline}")"

KAFKA_VERSION="${THREADLINE_KAFKA_VERSION:-3.9.1}"
KAFKA_POM="$THREADLINE_ROOT/scripts/kafka/pom.xml"
KAFKA_HOME="$CACHE_DIR/kafka-$KAFKA_VERSION"   # jar cache, shared by all state dirs
KAFKA_LIBS="$KAFKA_HOME/libs"
KAFKA_PORT="${THREADLINE_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${THREADLINE_KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_STATE="$STATE_DIR/kafka"

PG_PORT="${THREADLINE_PG_PORT:-55432}"
PG_STATE="$STATE_DIR/postgres"                 # pid file lives here in every layout

log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Print the pid stored in file $1 if that process is alive, else fail.
live_pid() {
  local pid
  [[ -r $1 ]] || return 1
  read -r pid <"$1" || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

# Install Debian packages when missing (fresh machines). Only possible as root.
apt_install() {
  [[ $(id -u) -eq 0 ]] || die "missing packages ($*): install them (apt-get install $*) or run as root"
  log "apt-get install $* ..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >&2
}

find_java() {
  JAVA="${JAVA_HOME:+$JAVA_HOME/bin/java}"
  [[ -n $JAVA && -x $JAVA ]] || JAVA="$(command -v java || true)"
  if [[ -z $JAVA ]]; then
    apt_install openjdk-17-jre-headless
    JAVA="$(command -v java)"
  fi
}

# Command prefix (array KAFKA_TOOL) that runs a Kafka CLI class from the cached
# jars: small heap, fast-start JIT, warnings only (the tools otherwise print
# log4j noise on stderr). An array, not just a function, so `timeout` can wrap it.
kafka_tool_cmd() {
  local cfg="$KAFKA_HOME/tools-log4j.properties"
  [[ -f $cfg ]] || printf '%s\n' 'log4j.rootLogger=WARN, stderr' \
    'log4j.appender.stderr=org.apache.log4j.ConsoleAppender' \
    'log4j.appender.stderr.Target=System.err' \
    'log4j.appender.stderr.layout=org.apache.log4j.PatternLayout' \
    'log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n' 2>/dev/null >"$cfg" || true
  [[ -n ${JAVA:-} ]] || find_java
  KAFKA_TOOL=("$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$cfg" -cp "$KAFKA_LIBS/*")
}
kafka_tool() { kafka_tool_cmd; "${KAFKA_TOOL[@]}" "$@"; }
