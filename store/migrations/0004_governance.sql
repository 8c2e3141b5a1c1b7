-- Governance: query requests with their reviews, and the append-only, hash-chained audit log
-- (DESIGN.md "The governed query pipeline"; governance/README.md).

-- A query that waits for reviews (credential reviews_required > 0), or one that was bypassed.
-- `revision` grows with every edit of the SQL; a review counts only for the revision it was
-- given on, so editing voids earlier approvals. Params are tagged JSON (governance/params.ts).
create table query_requests (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  database_id text not null references databases(id) on delete cascade,
  credential_id text not null references credentials(id) on delete cascade,
  author_user_id text not null references users(id) on delete cascade,
  -- The API key the author acted through (x-act-as-user), if any.
  author_api_key_id text,
  origin text not null check (origin in ('user', 'dashboard', 'workflow', 'ai')),
  ai_client_id text,
  ai_client_name text,
  statement text not null,
  params jsonb not null default '[]',
  classification text not null check (classification in ('read', 'write')),
  revision integer not null default 1,
  reviews_required integer not null check (reviews_required >= 0),
  status text not null
    check (status in ('pending', 'approved', 'rejected', 'canceled', 'executing', 'executed', 'failed')),
  run_on_approval boolean not null default false,
  -- A super admin's acknowledged override of the review gate (SPEC.md 2.2 review_bypass_allowed).
  bypassed boolean not null default false,
  bypass_reason text,
  bypassed_at timestamptz,
  -- What the run produced: a summary only (rows are never kept in the store).
  result_command text,
  result_rows integer,
  error text,
  executed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (not bypassed or bypassed_at is not null)
);
create index query_requests_org_status_idx on query_requests (org_id, status, id desc);
create index query_requests_database_idx on query_requests (database_id, id desc);

-- Approvals, rejections and comments, each on the revision it was given.
create table query_request_reviews (
  id text primary key,
  request_id text not null references query_requests(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  -- The API key that acted for the reviewer (x-act-as-user), if any.
  via_api_key_id text,
  revision integer not null,
  verdict text not null check (verdict in ('approve', 'reject', 'comment')),
  body text not null default '',
  created_at timestamptz not null default now()
);
create index query_request_reviews_request_idx on query_request_reviews (request_id, id);

-- One entry per query attempt. No foreign keys on purpose: an entry outlives the user, key,
-- database and request it names, and a cascade would be a delete, which the trigger refuses.
-- `hash` = sha256(prev_hash || ':' || seq || ':' || body), where body is the canonical JSON of
-- every other column (governance/audit-chain.ts), so altering any column breaks the chain.
create table audit_log (
  id text primary key,
  org_id text not null,
  seq bigint not null,
  occurred_at timestamptz not null,
  actor_kind text not null check (actor_kind in ('user', 'api_key', 'workflow_run')),
  actor_user_id text,
  actor_api_key_id text,
  actor_workflow_run_id text,
  actor_workflow_id text,
  origin text not null check (origin in ('user', 'dashboard', 'workflow', 'ai')),
  ai_client_id text,
  ai_client_name text,
  database_id text,
  credential_id text,
  statement text not null,
  params jsonb not null,
  classification text check (classification in ('read', 'write')),
  rows_returned integer,
  duration_ms integer,
  request_id text,
  reviews_required integer,
  approved_by jsonb not null default '[]',
  bypassed boolean not null default false,
  bypass_reason text,
  outcome text not null check (outcome in ('allowed', 'pending', 'denied', 'failed')),
  detail text,
  prev_hash text not null,
  hash text not null,
  unique (org_id, seq)
);
create index audit_log_org_time_idx on audit_log (org_id, occurred_at);
create index audit_log_org_database_idx on audit_log (org_id, database_id, seq);
create index audit_log_org_actor_idx on audit_log (org_id, actor_user_id, seq);

-- The head of each organization's chain. Appending updates this row, so concurrent appends of
-- one organization serialize on its row lock (and read its newest hash after the wait), while
-- organizations never wait for each other.
create table audit_heads (
  org_id text primary key references organizations(id) on delete cascade,
  seq bigint not null default 0,
  hash text not null default repeat('0', 64),
  prev_hash text not null default repeat('0', 64)
);
insert into audit_heads (org_id) select id from organizations;

create function audit_heads_for_new_org() returns trigger language plpgsql as $$
begin
  insert into audit_heads (org_id) values (new.id) on conflict do nothing;
  return new;
end $$;
create trigger organizations_audit_head after insert on organizations
  for each row execute function audit_heads_for_new_org();

-- Append-only: the database itself refuses to change or remove an entry, whoever asks.
create function audit_log_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only: % is not allowed', tg_op
    using errcode = 'insufficient_privilege';
end $$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_refuse_change();
create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_refuse_change();
