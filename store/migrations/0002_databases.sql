-- Registered databases and their credentials (SPEC.md 2.2). Secrets (passwords, client keys)
-- are sealed envelopes (store/crypto.ts) bound to their row id; certificates are PEM text.

create table databases (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  api_id text,
  name text not null,
  adapter text not null check (adapter in ('postgres', 'mysql', 'clickhouse', 'sqlserver', 'oracle')),
  hostname text not null,
  port integer not null check (port between 1 and 65535),
  database text not null,
  ssl boolean not null default false,
  verify_server_hostname boolean not null default false,
  ssl_ca_cert text,
  ssl_client_cert text,
  ssl_client_key_enc text,
  restrict_access boolean not null default false,
  review_bypass_allowed boolean not null default false,
  group_name text,
  slack_channel text,
  agent_id text,
  ai_enabled boolean not null default false,
  ai_max_rows integer not null default 500 check (ai_max_rows > 0),
  inserted_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- SPEC.md 2.2: verify_server_hostname requires a CA certificate.
  check (not verify_server_hostname or ssl_ca_cert is not null)
);
create unique index databases_api_id_key on databases (org_id, api_id) where api_id is not null;
create index databases_org_group_idx on databases (org_id, group_name, id);

create table credentials (
  id text primary key,
  database_id text not null references databases(id) on delete cascade,
  username text not null,
  password_enc text not null,
  hostname text,
  ai_allowed boolean not null default false,
  timeout integer check (timeout is null or timeout > 0),
  reviews_required integer not null default 0 check (reviews_required >= 0),
  default_credential boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (database_id, username)
);
-- At most one default credential per database.
create unique index credentials_one_default on credentials (database_id) where default_credential;

-- Access grants for restrict_access databases (permissions: deleted with the database).
create table database_grants (
  id text primary key,
  database_id text not null references databases(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  granted_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  unique (database_id, user_id)
);
