-- The query console's own memory: a person's recent statements (history, the last 100 kept) and
-- named queries they saved, for themselves or shared with their organization. Neither holds a
-- result: a re-run goes through the governed pipeline again, under the access of that moment.
create table query_history (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  database_id text references databases(id) on delete set null,
  credential_id text,
  statement text not null,
  -- executed | pending_review | error
  outcome text not null,
  rows_count integer,
  duration_ms integer,
  ran_at timestamptz not null default now()
);
create index query_history_user_idx on query_history (user_id, ran_at desc);

create table saved_queries (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  owner_id text not null references users(id) on delete cascade,
  name text not null,
  statement text not null,
  database_id text references databases(id) on delete set null,
  -- Shared: every person of the organization sees it in their list (running it stays governed).
  shared boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index saved_queries_org_idx on saved_queries (org_id, shared);
create index saved_queries_owner_idx on saved_queries (owner_id);
