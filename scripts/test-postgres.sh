#!/usr/bin/env bash
# Makes sure a local PostgreSQL 15 runs with the test role and database, and prints its URL.
set -euo pipefail
version=15

# Everything but the URL goes to stderr: the caller captures stdout, and pg_ctlcluster chats there
# ("Removed stale pid file.") after a machine was stopped without a clean shutdown.
prepare() {
  if ! pg_lsclusters -h 2>/dev/null | grep -q "^$version main"; then
    pg_createcluster "$version" main
  fi
  if ! pg_lsclusters -h | grep -q "^$version main .* online"; then
    pg_ctlcluster "$version" main start
  fi
  for _ in $(seq 1 30); do
    su postgres -c "psql -qtAc 'select 1'" >/dev/null 2>&1 && break
    sleep 1
  done
  su postgres -c "psql -qtAc \"select 1 from pg_roles where rolname = 'paddock'\"" | grep -q 1 ||
    su postgres -c "psql -qc \"create role paddock login password 'paddock' createdb\""
  # Test databases are dropped WITH (FORCE), which must also end an autovacuum worker that happens
  # to be in one; that worker runs under no role, so only pg_signal_backend may signal it.
  su postgres -c "psql -qc 'grant pg_signal_backend to paddock'" 2>/dev/null
  su postgres -c "psql -qtAc \"select 1 from pg_database where datname = 'paddock_test'\"" | grep -q 1 ||
    su postgres -c "createdb -O paddock paddock_test"
}

prepare >&2
echo "postgres://paddock:paddock@127.0.0.1:5432/paddock_test"
