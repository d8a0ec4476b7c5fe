#!/bin/bash
# The streaming read replica's entry point. First start: clone the primary with pg_basebackup
# (-R writes standby.signal and primary_conninfo), so the server comes up as a hot standby that
# follows the primary's WAL. Later starts find the data directory and go straight to postgres.
set -euo pipefail
: "${PRIMARY_HOST:?}" "${REPLICATION_USER:?}" "${REPLICATION_PASSWORD:?}"
PGDATA="${PGDATA:-/var/lib/postgresql/data}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h "$PRIMARY_HOST" -U "$REPLICATION_USER" -d postgres; do
    echo "replica: waiting for the primary at $PRIMARY_HOST"
    sleep 1
  done
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  PGPASSWORD="$REPLICATION_PASSWORD" gosu postgres pg_basebackup \
    -h "$PRIMARY_HOST" -U "$REPLICATION_USER" -D "$PGDATA" -R -X stream --checkpoint=fast
fi

# The image's own entry point skips initdb (PG_VERSION exists) and drops to the postgres user.
exec docker-entrypoint.sh postgres -c hot_standby=on
