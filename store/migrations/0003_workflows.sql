-- Workflow definitions, their runs, tracker webhook deliveries and the service's signing keys
-- (SPEC.md 2.1; workflows/README.md). API step header values inside `steps` are sealed
-- envelopes (store/crypto.ts) bound to the workflow, step and header name.

create table workflows (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  name text not null,
  group_name text,
  cron_schedule text,
  -- SPEC.md 2.1 trigger_tracker_label: the id resolved through the tracker's API, and the name asked for.
  tracker_label_id text,
  tracker_label_name text,
  inputs jsonb not null default '[]',
  steps jsonb not null default '[]',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- SPEC.md 3: DELETE archives; an archived workflow stays stored but never runs again.
  archived_at timestamptz,
  check ((tracker_label_id is null) = (tracker_label_name is null))
);
create index workflows_org_group_idx on workflows (org_id, group_name, id);
create index workflows_tracker_label_idx on workflows (tracker_label_id)
  where tracker_label_id is not null and archived_at is null;

-- One row per run; the Temporal workflow id is the run id. `state` holds the step states and
-- approvals once the run has ended (live state comes from the workflow's query while it runs).
create table workflow_runs (
  id text primary key,
  workflow_id text not null references workflows(id) on delete cascade,
  org_id text not null references organizations(id) on delete cascade,
  trigger text not null check (trigger in ('manual', 'api', 'cron', 'tracker')),
  initiator_user_id text references users(id) on delete set null,
  initiator_api_key_id text,
  inputs jsonb not null default '{}',
  status text not null
    check (status in ('running', 'waiting_for_approval', 'succeeded', 'failed', 'canceled')),
  state jsonb,
  error text,
  started_at timestamptz not null default now(),
  finished_at timestamptz
);
create index workflow_runs_workflow_idx on workflow_runs (workflow_id, id desc);

-- A tracker webhook delivery starts at most one run per workflow, however often it is redelivered:
-- the run id is chosen once per (delivery, workflow) and the Temporal workflow id is that run id.
create table tracker_deliveries (
  delivery_id text not null,
  workflow_id text not null references workflows(id) on delete cascade,
  run_id text not null,
  received_at timestamptz not null default now(),
  primary key (delivery_id, workflow_id)
);

-- The service's ES256 signing keys (x-service-jwt, later OAuth access tokens). The private key
-- is a sealed envelope bound to the key id; the public JWK is served at /.well-known/jwks.json.
create table signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  private_jwk_enc text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
