#!/bin/sh
# Runs once, when the postgres container initialises an empty data directory: one login role
# per service, each owning only its own databases. Countersign's store admits only Countersign
# (README "Security model"); Temporal gets CREATEDB so temporal-sql-tool can create its two.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v cs_pw="$COUNTERSIGN_DB_PASSWORD" -v t_pw="$TEMPORAL_DB_PASSWORD" <<'SQL'
create role countersign login password :'cs_pw';
create database countersign owner countersign;
revoke all on database countersign from public;
create role temporal login createdb password :'t_pw';
SQL
