-- Agents: processes a customer runs inside a private network that relay TCP for the databases
-- assigned to them (databases.agent_id; agent/README.md). The token is a bearer secret
-- (store/secrets.ts): shown once, stored only as its SHA-256 hash, found by row id.
--
-- Life cycle of the columns:
--   secret_hash       set at registration, never changed; revoked_at set once by revoke
--   connected_at      set when a tunnel is accepted (version: what the agent reported then)
--   disconnected_at   set when that tunnel closes; a tunnel is open while connected_at > disconnected_at
--   last_seen_at      refreshed by heartbeats; a process that died without closing its tunnel
--                     stops refreshing it, so "connected" also needs a recent last_seen_at
create table agents (
  id text primary key,
  org_id text not null references organizations(id) on delete cascade,
  name text not null,
  secret_hash text not null,
  created_by text references users(id) on delete set null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  connected_at timestamptz,
  disconnected_at timestamptz,
  last_seen_at timestamptz,
  version text
);
create unique index agents_org_name_key on agents (org_id, name) where revoked_at is null;
create index agents_org_idx on agents (org_id, id);

-- databases.agent_id was free text before agents existed. NOT VALID: rows written before this
-- migration are not checked (they keep working as "unknown agent" until edited); every new or
-- changed value must name a registered agent.
alter table databases
  add constraint databases_agent_id_fkey foreign key (agent_id) references agents(id) not valid;
create index databases_agent_idx on databases (agent_id) where agent_id is not null;
