-- Where each exactly-once write step runs (governance/once.ts): the database and credential whose
-- pool prepared its attempts' transactions, so the periodic sweep (automation/prepared-sweep.ts) can
-- list what they left prepared and settle it. Rows written before this have no location and are
-- never swept. A deleted database or credential leaves its rows without a location: nothing can
-- reach that target through Countersign any more, and the ordinary purge takes them.
alter table query_step_commits
  add column database_id text references databases(id) on delete set null,
  add column credential_id text references credentials(id) on delete set null;

create index query_step_commits_location on query_step_commits (database_id, credential_id)
  where database_id is not null and credential_id is not null;
