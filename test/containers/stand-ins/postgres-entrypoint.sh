#!/bin/bash
# What the official postgres image's entrypoint does that compose relies on: as root it takes
# PGDATA over for the postgres user and drops to it; on an empty PGDATA it runs initdb with
# POSTGRES_USER/POSTGRES_PASSWORD, allows password logins over the network, and creates POSTGRES_DB
# through a temporary server that listens on the socket only.
set -Eeo pipefail
if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  find "$PGDATA" \! -user postgres -exec chown postgres '{}' +
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?is not set: the database would be open to anyone}"
  POSTGRES_USER=${POSTGRES_USER:-postgres}
  POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") -D "$PGDATA"
  printf '\nhost all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec "$@"
