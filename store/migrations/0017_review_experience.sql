-- A credential may require a written justification for the
-- queries that wait for its reviews; every revision of a request's SQL is kept so reviewers see
-- what an edit changed and which approvals it voided.
alter table credentials add column justification_required boolean not null default false;
alter table query_requests add column justification text;

create table query_request_revisions (
  request_id text not null references query_requests(id) on delete cascade,
  revision integer not null,
  statement text not null,
  params jsonb not null,
  created_at timestamptz not null default now(),
  primary key (request_id, revision)
);
