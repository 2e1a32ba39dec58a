#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL 15 server on a free loopback port and exports
# FACESEAL_TEST_POSTGRES_URL for it. The server is always stopped afterwards (trap); the script
# returns the command's exit status. Usage: scripts/with-postgres.sh swift test
set -uo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

# PostgreSQL 15 is what Debian 12 ships; fall back to the newest installed major version.
pgbin="${FACESEAL_PGBIN:-}"
if [ -z "$pgbin" ]; then
  if [ -x /usr/lib/postgresql/15/bin/initdb ]; then
    pgbin=/usr/lib/postgresql/15/bin
  else
    pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  fi
fi
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  # No server: run the command anyway. Under CI=true the PostgreSQL suite then fails, as it must.
  echo "with-postgres: no PostgreSQL server binaries found (install 'postgresql'); running without FACESEAL_TEST_POSTGRES_URL" >&2
  "$@"
  exit $?
fi

# One data directory per checkout, so two checkouts on one machine never stop each other's server.
checkout_id="$(pwd -P | cksum | cut -d' ' -f1)"
pgdata="${FACESEAL_PGDATA:-${TMPDIR:-/tmp}/faceseal-pg-$checkout_id}"

# PostgreSQL refuses to run as root: run its programs as the 'postgres' user then.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

stop_server() {
  if [ -f "$pgdata/postmaster.pid" ]; then
    as_pg "$pgbin/pg_ctl" -D "$pgdata" -m fast -w -t 30 stop >/dev/null 2>&1 \
      || as_pg "$pgbin/pg_ctl" -D "$pgdata" -m immediate -w -t 30 stop >/dev/null 2>&1 \
      || true
  fi
}

cleanup() {
  stop_server
  # Only delete the directory once no server runs on it.
  if [ ! -f "$pgdata/postmaster.pid" ]; then
    rm -rf "$pgdata"
  fi
}

# A leftover server from an interrupted run goes first; never delete a directory under a running server.
stop_server
if [ -f "$pgdata/postmaster.pid" ]; then
  echo "with-postgres: a server still runs on $pgdata and could not be stopped" >&2
  exit 1
fi
rm -rf "$pgdata"
mkdir -p "$pgdata"
if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$pgdata"; fi
chmod 700 "$pgdata"

if ! as_pg "$pgbin/initdb" -D "$pgdata" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync \
  >"${pgdata}.initdb.log" 2>&1; then
  echo "with-postgres: initdb failed:" >&2
  cat "${pgdata}.initdb.log" >&2
  rm -f "${pgdata}.initdb.log"
  cleanup
  exit 1
fi
rm -f "${pgdata}.initdb.log"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Pick a free port; a port taken between the check and the start makes pg_ctl fail, so try a few.
# The server is thrown away afterwards, so fsync is off; parallel test cases each hold a small pool,
# hence more connections than the default 100.
started=""
for _ in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 30000))
  port_in_use "$port" && continue
  if as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $pgdata -c fsync=off -c max_connections=300" start >/dev/null 2>&1; then
    started="$port"
    break
  fi
done
if [ -z "$started" ]; then
  echo "with-postgres: could not start PostgreSQL; server log:" >&2
  cat "$pgdata/server.log" >&2 2>/dev/null
  exit 1
fi
if ! "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$started"; then
  echo "with-postgres: server on port $started is not ready" >&2
  exit 1
fi

export FACESEAL_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$started/postgres"
echo "with-postgres: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$started" >&2
"$@"
status=$?
exit "$status"
