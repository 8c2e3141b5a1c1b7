-- A run row is written before its Temporal execution starts; a process that stops in between
-- leaves a row with no execution. `snapshot` keeps what the execution is started with, so a sweep
-- (automation/run-sweep.ts) can start it later, and `checked_at` is the sweep's lease: one
-- replica checks a row at a time, each row at most every few seconds. Both are cleared once the
-- run has ended.
alter table workflow_runs add column snapshot jsonb;
alter table workflow_runs add column checked_at timestamptz;
create index workflow_runs_active_idx on workflow_runs (checked_at nulls first)
  where finished_at is null;

-- An approval that was rejected, or that expired, ends the run as such rather than as `failed`.
alter table workflow_runs drop constraint workflow_runs_status_check;
alter table workflow_runs add constraint workflow_runs_status_check
  check (status in ('running', 'waiting_for_approval', 'succeeded', 'failed', 'canceled', 'rejected', 'expired'));

-- Idempotency-Key of a run start (draft-ietf-httpapi-idempotency-key-header): per workflow and
-- caller, the request it answered (a hash of its inputs) and the run it started. Kept a day.
create table run_idempotency_keys (
  workflow_id text not null references workflows(id) on delete cascade,
  caller text not null,
  key text not null,
  request_hash text not null,
  run_id text not null references workflow_runs(id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (workflow_id, caller, key)
);
create index run_idempotency_keys_created_idx on run_idempotency_keys (created_at);
