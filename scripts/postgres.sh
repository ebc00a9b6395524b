#!/usr/bin/env bash
# Start (or stop) a throw-away PostgreSQL server on 127.0.0.1 for the tests.
# Usage: scripts/postgres.sh start|stop ; prints the SQLAlchemy URL on start.
set -euo pipefail
PGPORT="${ACTIVEGRADE_PG_PORT:-54329}"
PGDIR="${ACTIVEGRADE_PG_DIR:-/tmp/activegrade-pg}"
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
as_pg() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
case "${1:-start}" in
  start)
    if [ ! -f "$PGDIR/PG_VERSION" ]; then
      mkdir -p "$PGDIR"
      [ "$(id -u)" -eq 0 ] && chown postgres "$PGDIR"
      as_pg "$bin/initdb -D $PGDIR -A trust -U postgres" >/dev/null
    fi
    as_pg "$bin/pg_ctl -D $PGDIR -l $PGDIR/log -w -o '-p $PGPORT -k /tmp -c listen_addresses=127.0.0.1' status" >/dev/null 2>&1 ||
      as_pg "$bin/pg_ctl -D $PGDIR -l $PGDIR/log -w -o '-p $PGPORT -k /tmp -c listen_addresses=127.0.0.1' start" >/dev/null
    echo "postgresql+psycopg://postgres@127.0.0.1:$PGPORT/postgres"
    ;;
  stop)
    as_pg "$bin/pg_ctl -D $PGDIR -m fast stop" >/dev/null 2>&1 || true
    ;;
esac
