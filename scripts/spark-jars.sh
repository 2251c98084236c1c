#!/usr/bin/env bash
# The jars a PySpark session needs to send OpenLineage events to Kafka:
# io.openlineage:openlineage-spark_<scala>, org.apache.kafka:kafka-clients and
# the org.postgresql:postgresql JDBC driver, resolved from Maven Central with
# mvn (scripts/spark/pom.xml) into
#   ${THREADLINE_CACHE_DIR:-~/.cache/threadline}/spark-jars/openlineage-<version>_<scala>/
# once. A marker holds a hash of the pom and the versions, so a second run
# does no resolution at all (no mvn, no network) and editing the pom or a
# version re-resolves.
#
#   scripts/spark-jars.sh              comma-separated jar paths, for spark.jars / --jars
#   scripts/spark-jars.sh --classpath  colon-separated, for spark.driver.extraClassPath
#   scripts/spark-jars.sh --dir        the directory holding the jars
#
# stdout carries only that one line; progress and errors go to stderr.
#
# Knobs: THREADLINE_OPENLINEAGE_SPARK_VERSION (1.53.0), THREADLINE_SPARK_KAFKA_CLIENTS_VERSION
# (3.9.1), THREADLINE_POSTGRESQL_JDBC_VERSION (42.7.14), THREADLINE_SPARK_SCALA_VERSION
# (default: read from the pyspark build in $THREADLINE_E2E_PYTHON, else .venv/bin/python,
# falling back to 2.12 when pyspark is not installed).
set -euo pipefail

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
log() { printf '[spark-jars] %s\n' "$*" >&2; }
die() { printf '[spark-jars] ERROR: %s\n' "$*" >&2; exit 1; }

SPARK_POM="$THREADLINE_ROOT/scripts/spark/pom.xml"
OL_VERSION="${THREADLINE_OPENLINEAGE_SPARK_VERSION:-1.53.0}"
KAFKA_CLIENTS_VERSION="${THREADLINE_SPARK_KAFKA_CLIENTS_VERSION:-3.9.1}"
PG_JDBC_VERSION="${THREADLINE_POSTGRESQL_JDBC_VERSION:-42.7.14}"

# Scala binary version of the installed pyspark (its jars/ holds scala-library-2.1x.y.jar):
# the listener artifact must match it (_2.12 for Spark 3.x wheels, _2.13 for Spark 4).
scala_version() {
  if [[ -n ${THREADLINE_SPARK_SCALA_VERSION:-} ]]; then
    printf '%s\n' "$THREADLINE_SPARK_SCALA_VERSION"
    return 0
  fi
  local python="${THREADLINE_E2E_PYTHON:-$THREADLINE_ROOT/.venv/bin/python}" jar
  jar="$("$python" - 2>/dev/null <<'PY' || true
import glob, os, pyspark
print(" ".join(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "scala-library-*.jar"))))
PY
)"
  if [[ $jar =~ scala-library-(2\.1[0-9])\. ]]; then
    printf '%s\n' "${BASH_REMATCH[1]}"
  else
    printf '2.12\n'
  fi
}

resolve() {
  local out="$1" scala="$2" marker="$1/.resolved" want tmp
  want="$(sha256sum <"$SPARK_POM" | cut -c1-64) ol=$OL_VERSION scala=$scala kafka=$KAFKA_CLIENTS_VERSION pg=$PG_JDBC_VERSION"
  if [[ -f $marker && $(<"$marker") == "$want" ]]; then return 0; fi
  command -v mvn >/dev/null || apt_install maven
  [[ -n ${JAVA:-} ]] || find_java
  mkdir -p "$out"
  tmp="$out.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "resolving openlineage-spark_$scala $OL_VERSION, kafka-clients $KAFKA_CLIENTS_VERSION, postgresql $PG_JDBC_VERSION from Maven Central (first run only) ..."
  # The pom is copied out of the repo so Maven never drops a target/ dir there; the
  # local repository is the one scripts/services.sh uses for the Kafka broker.
  cp "$SPARK_POM" "$tmp/pom.xml"
  if ! mvn -B -Dstyle.color=never -f "$tmp/pom.xml" -Dmaven.repo.local="$CACHE_DIR/m2" \
      -Dscala.binary.version="$scala" -Dopenlineage.version="$OL_VERSION" \
      -Dkafka.version="$KAFKA_CLIENTS_VERSION" -Dpostgresql.jdbc.version="$PG_JDBC_VERSION" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/jars" \
      >"$tmp/mvn.log" 2>&1; then
    tail -n 40 "$tmp/mvn.log" >&2
    mv "$tmp/mvn.log" "$out.mvn.log"
    rm -rf "$tmp"
    die "maven could not resolve the Spark jars (full output: $out.mvn.log)"
  fi
  rm -rf "$out"
  mv "$tmp/jars" "$out"
  mv "$tmp/mvn.log" "$out/mvn.log"
  rm -rf "$tmp"
  printf '%s\n' "$want" >"$marker"
}

main() {
  local mode="${1:---jars}" scala out
  case "$mode" in --jars | --classpath | --dir) ;; *) die "usage: $0 [--jars|--classpath|--dir]" ;; esac
  scala="$(scala_version)"
  out="$CACHE_DIR/spark-jars/openlineage-${OL_VERSION}_$scala"
  mkdir -p "$CACHE_DIR/spark-jars"
  # Two test runs at once (shared machines) must not resolve into the same dir together.
  exec 8>"$CACHE_DIR/spark-jars/.lock"
  flock -w 600 8 || die "another spark-jars.sh holds $CACHE_DIR/spark-jars/.lock"
  resolve "$out" "$scala"
  exec 8>&-
  local jars=("$out"/*.jar)
  [[ -f ${jars[0]} ]] || die "no jars in $out (delete it and run again)"
  case "$mode" in
    --dir) printf '%s\n' "$out" ;;
    --jars) (IFS=,; printf '%s\n' "${jars[*]}") ;;
    --classpath) (IFS=:; printf '%s\n' "${jars[*]}") ;;
  esac
}

main "$@"
