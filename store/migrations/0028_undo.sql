-- Undo of an approved write (governance/undo/). Before an approved UPDATE or DELETE commits, the
-- rows it touches are read in its own transaction and kept here, sealed with the service keyring
-- like a credential's password (context: the request id), until `expires_at`; the maintenance
-- sweep deletes them after that. Only the row count is ever shown or audited.
create table request_backups (
  request_id text primary key references query_requests(id) on delete cascade,
  org_id text not null,
  revision integer not null,
  -- UPDATE or DELETE: the inverse is an UPDATE back by primary key, or an INSERT of the rows.
  verb text not null check (verb in ('UPDATE', 'DELETE')),
  -- The table as the target's catalog names it, its primary key, its columns and what was set.
  relation_schema text not null,
  relation_name text not null,
  key_columns jsonb not null,
  columns jsonb not null,
  assigned jsonb not null,
  row_count integer not null,
  rows_enc text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index request_backups_expires_idx on request_backups (expires_at);

-- An undo request holds the inverse of `undo_of`; its values are bound from that backup at run
-- time, never stored on the request. `undo_unavailable_revision`: the revision whose preview told
-- reviewers that undo is unavailable (more rows than the credential keeps), so it may then run
-- without a backup; `undo_note` says why.
alter table query_requests add column undo_of text references query_requests(id) on delete set null;
alter table query_requests add column undo_unavailable_revision integer;
alter table query_requests add column undo_note text;
create unique index query_requests_undo_of_idx on query_requests (undo_of)
  where undo_of is not null and status not in ('rejected', 'canceled', 'failed');

-- Rows of one write a credential keeps for undo at most; above it, undo is unavailable.
alter table credentials add column undo_max_rows integer not null default 10000
  check (undo_max_rows >= 0 and undo_max_rows <= 1000000);
