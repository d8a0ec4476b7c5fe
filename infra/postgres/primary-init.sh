#!/bin/bash
# Runs once, when the primary's data directory is first initialised (docker-entrypoint-initdb.d):
# a role the read replica streams WAL with, allowed from any address on the compose network.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v user="$REPLICATION_USER" -v password="$REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE :"user" WITH REPLICATION LOGIN PASSWORD :'password';
SQL
echo "host replication ${REPLICATION_USER} all scram-sha-256" >>"$PGDATA/pg_hba.conf"
