-- Exactly-once query steps (governance/once.ts): per write step of a run, the latest attempt that
-- claimed it and, once decided, the attempt whose prepared transaction on the target commits and
-- the step output that attempt produced. The store arbitrates: an attempt commits its prepared
-- transaction only after recording itself here while it still holds the claim, and a later
-- attempt rolls back only prepared transactions of attempts that never did.
create table query_step_commits (
  run_id text not null,
  step_id text not null,
  claimed_attempt integer not null,
  committed_attempt integer,
  outcome jsonb,
  updated_at timestamptz not null default now(),
  primary key (run_id, step_id)
);

-- Rows are needed only while the step's attempts may still run; older ones are purged.
create index query_step_commits_updated on query_step_commits (updated_at);
