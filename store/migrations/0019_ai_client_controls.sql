-- An organization's admins limit a connected AI client — to some databases, or not at
-- all (disabled) — whoever connected it. No row: the client may do what its person may.
create table ai_client_controls (
  org_id text not null references organizations(id) on delete cascade,
  client_id text not null references oauth_clients(id) on delete cascade,
  disabled boolean not null default false,
  -- null: every database the person may use with AI; otherwise only these
  database_ids text[],
  updated_by text references users(id) on delete set null,
  updated_at timestamptz not null default now(),
  primary key (org_id, client_id)
);
