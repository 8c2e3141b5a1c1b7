-- Organizations own everything; users, API keys, personal access tokens and web sessions.
-- Bearer secrets are stored only as SHA-256 hashes (store/secrets.ts); passwords as scrypt.

create table organizations (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  email text not null,
  name text not null default '',
  role text not null check (role in ('super_admin', 'admin', 'member')),
  password_hash text,
  disabled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create index users_org_idx on users (org_id);

-- API keys act for the organization (SPEC.md 5.1, header x-api-key).
create table api_keys (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  name text not null,
  secret_hash text not null,
  created_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_org_idx on api_keys (org_id);

-- Personal access tokens act as their user (SPEC.md 5.2, Authorization: Bearer).
create table personal_tokens (
  id text primary key,
  user_id text not null references users(id) on delete cascade,
  name text not null,
  secret_hash text not null,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index personal_tokens_user_idx on personal_tokens (user_id);

-- Cookie sessions for the web pages; the cookie holds the secret, the row its hash.
create table sessions (
  id text primary key,
  user_id text not null references users(id) on delete cascade,
  secret_hash text not null,
  csrf_token text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index sessions_user_idx on sessions (user_id);
