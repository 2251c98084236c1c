# shellcheck shell=bash disable=SC2153  # globals come from lib/common.sh
# PostgreSQL (Debian packages) for scripts/services.sh: a private cluster on
# 127.0.0.1:$PG_PORT, never the package's own "main" cluster on 5432.

PG_PIDFILE="$PG_STATE/postgres.pid"

# Decide who runs the server and where its files live (sets PG_USER, PG_DIR,
# PG_DATA, PG_LOG). initdb/postgres refuse to run as root, so root delegates to
# a system user "threadline". That user must be able to reach the data and
# socket dirs; if $STATE_DIR sits below a directory it cannot traverse (e.g.
# /root/...) we do NOT loosen permissions on the parents but put the cluster
# under /var/tmp/threadline-<hash of state dir> instead (stable per state dir;
# $PG_STATE/postgres.log then is a symlink to the real log). The same fallback
# applies when the socket path would exceed the 107-byte unix socket limit.
pg_layout() {
  PG_USER="$(id -un)"
  PG_DIR="$PG_STATE"
  if [[ $(id -u) -eq 0 ]]; then PG_USER=threadline; fi
  if [[ ${1:-} == create ]]; then mkdir -p "$PG_STATE"; pg_ensure_user; fi
  local sock="$PG_DIR/.s.PGSQL.$PG_PORT"
  if ((${#sock} > 100)) || { [[ $PG_USER != "$(id -un)" ]] && ! pg_as test -x "$STATE_DIR"; }; then
    PG_DIR="/var/tmp/threadline-$(printf '%s' "$STATE_DIR" | sha256sum | cut -c1-12)/postgres"
  fi
  PG_DATA="$PG_DIR/data"
  PG_LOG="$PG_DIR/postgres.log"
}

# Run a command as the server's OS user, from a directory it can read
# (initdb/pg_ctl warn when the cwd is inaccessible).
pg_as() {
  if [[ $PG_USER == "$(id -un)" ]]; then (cd / && "$@"); else (cd / && runuser -u "$PG_USER" -- "$@"); fi
}

# Newest /usr/lib/postgresql/*/bin, or the one matching an existing cluster.
pg_find_bin() {
  local v=""
  [[ -f $PG_DATA/PG_VERSION ]] && v="$(<"$PG_DATA/PG_VERSION")"
  if [[ -n $v ]]; then
    PG_BIN="/usr/lib/postgresql/$v/bin"
    [[ -x $PG_BIN/postgres ]] || die "cluster $PG_DATA is PostgreSQL $v but $PG_BIN is missing (apt-get install postgresql-$v, or delete the data dir)"
    return 0
  fi
  PG_BIN="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)"
  if [[ -z $PG_BIN || ! -x $PG_BIN/initdb ]]; then
    # Keep the package from creating and starting its own cluster on 5432.
    if [[ $(id -u) -eq 0 && ! -e /etc/postgresql-common/createcluster.conf ]]; then
      mkdir -p /etc/postgresql-common
      echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
    fi
    apt_install postgresql postgresql-contrib
    PG_BIN="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin | sort -V | tail -n 1)"
  fi
}

pg_ensure_user() {
  [[ $PG_USER == "$(id -un)" ]] && return 0
  id -u "$PG_USER" >/dev/null 2>&1 && return 0
  log "creating system user $PG_USER (runs postgres; initdb refuses root)"
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$PG_USER"
}

# Pid of our postmaster: pid file, postmaster.pid and /proc/<pid>/exe must agree.
pg_pid() {
  local pid pm
  pid="$(live_pid "$PG_PIDFILE")" || return 1
  read -r pm <"$PG_DATA/postmaster.pid" 2>/dev/null || return 1
  [[ $pm == "$pid" && $(readlink "/proc/$pid/exe" 2>/dev/null) == */postgres ]] || return 1
  printf '%s\n' "$pid"
}

pg_write_config() {
  {
    echo "# Written by scripts/services.sh on every start; edits are overwritten."
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $PG_PORT"
    echo "unix_socket_directories = '$PG_DIR'"
    echo "max_connections = 200"
    echo "shared_buffers = 256MB"
    echo "password_encryption = 'scram-sha-256'"
    if [[ ${THREADLINE_PG_FAST:-0} == 1 ]]; then
      echo "# THREADLINE_PG_FAST=1: throwaway test data, trade durability for speed"
      echo "fsync = off"
      echo "synchronous_commit = off"
      echo "full_page_writes = off"
    fi
  } >"$PG_DATA/threadline.conf"
  # Passwords over TCP; over the socket (dir mode 0700) only the OS user, by peer.
  printf '%s\n' "# Written by scripts/services.sh on every start." \
    "local all $PG_USER peer" \
    "host  all all 127.0.0.1/32 scram-sha-256" >"$PG_DATA/pg_hba.conf"
  chown "$PG_USER:" "$PG_DATA/threadline.conf" "$PG_DATA/pg_hba.conf"
}

pg_init() {
  [[ -f $PG_DATA/PG_VERSION ]] && return 0
  local locale=(--no-locale)
  # C.UTF-8 keeps pg_trgm treating non-ASCII letters as word characters.
  locale -a 2>/dev/null | grep -qix 'c.utf-\?8' && locale=(--locale=C.UTF-8)
  log "initdb $PG_DATA (as $PG_USER)"
  pg_as "$PG_BIN/initdb" -D "$PG_DATA" -E UTF8 "${locale[@]}" --auth-local=peer \
    --auth-host=scram-sha-256 >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; die "initdb failed"; }
  echo "include 'threadline.conf'" >>"$PG_DATA/postgresql.conf"
}

# Roles/database the app and the tests expect. Idempotent: ALTER re-asserts
# attributes and passwords on every start. As root the bootstrap superuser
# already is "threadline" (initdb names it after the OS user).
pg_bootstrap() {
  pg_as "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" -d postgres >/dev/null <<'SQL'
SELECT 'CREATE ROLE threadline' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'threadline') \gexec
ALTER ROLE threadline LOGIN SUPERUSER PASSWORD 'threadline';
SELECT 'CREATE ROLE threadline_reader' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'threadline_reader') \gexec
ALTER ROLE threadline_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD 'threadline_reader';
SELECT 'CREATE DATABASE threadline OWNER threadline' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'threadline') \gexec
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    RAISE EXCEPTION 'extension pg_trgm is not available (apt-get install postgresql-contrib)';
  END IF;
END $$;
SQL
}

pg_start() {
  pg_layout create
  if pg_pid >/dev/null; then log "postgres already running (pid $(pg_pid))"; return 0; fi
  port_open "$PG_PORT" && die "port $PG_PORT is already in use by another process (set THREADLINE_PG_PORT)"
  pg_find_bin
  mkdir -p "$PG_DIR"
  chown "$PG_USER:" "$PG_DIR"
  chmod 0700 "$PG_DIR"
  [[ $PG_DIR == "$PG_STATE" ]] || ln -sfn "$PG_LOG" "$PG_STATE/postgres.log"
  pg_init
  pg_write_config
  log "starting postgres ($PG_BIN) on 127.0.0.1:$PG_PORT as $PG_USER (log: $PG_LOG)"
  # 9>&-: the postmaster must not inherit services.sh's lock fd.
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start >&2 9>&- ||
    { tail -n 30 "$PG_LOG" >&2 || true; die "postgres failed to start (log: $PG_LOG)"; }
  head -n 1 "$PG_DATA/postmaster.pid" >"$PG_PIDFILE"
  pg_bootstrap || die "creating roles/database failed"
  log "postgres ready (pid $(pg_pid))"
}

pg_stop() {
  pg_layout
  local pid
  if ! pid="$(pg_pid)"; then
    log "postgres not running"
    rm -f "$PG_PIDFILE"
    return 0
  fi
  pg_find_bin
  log "stopping postgres (pid $pid)"
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >&2 || die "pg_ctl stop failed"
  rm -f "$PG_PIDFILE"
}

pg_status() {
  pg_layout
  local pid
  if pid="$(pg_pid)"; then
    log "postgres: running (pid $pid, 127.0.0.1:$PG_PORT, data $PG_DATA)"
  else
    log "postgres: stopped"
    return 1
  fi
}
