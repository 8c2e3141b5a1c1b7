-- OAuth 2.1 authorization server for the MCP endpoint, and per-organization OIDC SSO.
-- Codes and refresh tokens are stored only as SHA-256 hashes (store/secrets.ts); a client
-- secret likewise; the SSO client secret is sealed with the Keyring because it must be read back.
-- Life cycles are documented in api/oauth/README.md.

-- Dynamically registered clients (RFC 7591). Not owned by an organization: registration is
-- anonymous; a client acts only through a user's grant.
create table oauth_clients (
  id text primary key,
  client_name text not null,
  redirect_uris text[] not null,
  grant_types text[] not null,
  response_types text[] not null,
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  scope text not null,
  -- Optional display metadata echoed back (client_uri, logo_uri, software_id, ...).
  extra jsonb not null default '{}',
  secret_hash text,
  secret_expires_at timestamptz,
  -- SHA-256 of the registering address: registrations are rate-limited per address.
  registered_from text not null,
  created_at timestamptz not null default now(),
  check ((token_endpoint_auth_method = 'none') = (secret_hash is null))
);
create index oauth_clients_from_idx on oauth_clients (registered_from, created_at);

-- One user's authorization of one client: codes, refresh tokens and access tokens hang off it,
-- and revoking it ends all of them (access tokens are checked against it on every MCP request).
create table oauth_grants (
  id text primary key,
  client_id text not null references oauth_clients(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  scope text not null,
  resource text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text
);
create index oauth_grants_user_idx on oauth_grants (user_id) where revoked_at is null;

-- Authorization codes: single use, minutes long, bound to client, redirect URI, PKCE challenge
-- and resource. `grant_id` is set when the code is exchanged, so a replay can revoke that grant.
create table oauth_codes (
  id text primary key,
  code_hash text not null,
  client_id text not null references oauth_clients(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  redirect_uri text not null,
  code_challenge text not null,
  scope text not null,
  resource text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  grant_id text references oauth_grants(id) on delete set null,
  created_at timestamptz not null default now()
);

-- Refresh tokens rotate on every use; `parent_id` keeps the lineage, `rotated_at` marks a
-- token already exchanged (reuse after the grace period revokes the grant).
create table oauth_refresh_tokens (
  id text primary key,
  grant_id text not null references oauth_grants(id) on delete cascade,
  token_hash text not null,
  parent_id text references oauth_refresh_tokens(id) on delete set null,
  expires_at timestamptz not null,
  rotated_at timestamptz,
  created_at timestamptz not null default now()
);
create index oauth_refresh_tokens_grant_idx on oauth_refresh_tokens (grant_id);

-- Remembered consent, per user and client.
create table oauth_consents (
  user_id text not null references users(id) on delete cascade,
  client_id text not null references oauth_clients(id) on delete cascade,
  scope text not null,
  created_at timestamptz not null default now(),
  primary key (user_id, client_id)
);

-- Per-organization OIDC single sign-on.
create table sso_configs (
  org_id text primary key references organizations(id) on delete cascade,
  id text not null unique,
  issuer text not null,
  client_id text not null,
  client_secret_enc text not null,
  -- Users with a verified email not yet known are created with this role (null: not provisioned).
  provision_role text check (provision_role in ('admin', 'member')),
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
