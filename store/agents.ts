// Agents and their tunnel status (store/migrations/0009_agents.sql documents each column).
import type { Tx } from './db.ts';

export interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  secret_hash: string;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
  connected_at: Date | null;
  disconnected_at: Date | null;
  last_seen_at: Date | null;
  version: string | null;
  /** The tunnel's session and the holding process's internal URL (0010_agent_relay.sql). */
  session_id: string | null;
  relay_url: string | null;
}

/** One host and port an agent may relay to. */
export interface AgentTarget {
  host: string;
  port: number;
}

export async function insertAgent(
  sql: Tx,
  agent: { id: string; orgId: string; name: string; secretHash: string; createdBy: string | null },
): Promise<AgentRow> {
  const [row] = await sql<AgentRow[]>`
    insert into agents (id, org_id, name, secret_hash, created_by)
    values (${agent.id}, ${agent.orgId}, ${agent.name}, ${agent.secretHash}, ${agent.createdBy})
    returning *`;
  return row!;
}

export async function findAgent(sql: Tx, id: string): Promise<AgentRow | null> {
  const [row] = await sql<AgentRow[]>`select * from agents where id = ${id}`;
  return row ?? null;
}

export async function findLiveAgentByName(sql: Tx, orgId: string, name: string): Promise<AgentRow | null> {
  const [row] = await sql<AgentRow[]>`
    select * from agents where org_id = ${orgId} and name = ${name} and revoked_at is null`;
  return row ?? null;
}

export async function listAgents(sql: Tx, orgId: string): Promise<AgentRow[]> {
  return sql<AgentRow[]>`select * from agents where org_id = ${orgId} order by id`;
}

export async function findAgents(sql: Tx, orgId: string, ids: string[]): Promise<AgentRow[]> {
  if (ids.length === 0) return [];
  return sql<AgentRow[]>`select * from agents where org_id = ${orgId} and id in ${sql(ids)}`;
}

/** Revokes a live agent of the organization; null when there is none. */
export async function revokeAgent(sql: Tx, orgId: string, id: string): Promise<AgentRow | null> {
  const [row] = await sql<AgentRow[]>`
    update agents set revoked_at = now()
     where id = ${id} and org_id = ${orgId} and revoked_at is null
    returning *`;
  return row ?? null;
}

export async function markAgentConnected(
  sql: Tx,
  id: string,
  version: string | null,
  session: { id: string; relayUrl: string | null },
): Promise<void> {
  await sql`
    update agents set connected_at = now(), last_seen_at = now(), version = ${version},
           session_id = ${session.id}, relay_url = ${session.relayUrl}
     where id = ${id}`;
}

/**
 * The holder's lease on every session it holds, in one statement (tunnels/agent-status.ts LEASE_MS).
 * Lease renewal and disconnect touch a row only while it still names the session: a tunnel the
 * agent has since opened on another process must not be refreshed or marked closed by the old holder.
 */
export async function renewAgentLeases(
  sql: Tx,
  held: Array<{ agentId: string; sessionId: string }>,
): Promise<void> {
  if (held.length === 0) return;
  await sql`
    update agents set last_seen_at = now()
     where id in ${sql(held.map((h) => h.agentId))}
       and session_id in ${sql(held.map((h) => h.sessionId))}`;
}

export async function markAgentDisconnected(sql: Tx, id: string, sessionId: string): Promise<void> {
  await sql`
    update agents set disconnected_at = now(), last_seen_at = now()
     where id = ${id} and session_id = ${sessionId}`;
}

/**
 * Every host and port the agent's databases name: the database's own hostname and each
 * credential-level hostname (SPEC.md 2.2 credential `hostname`), on the database's port.
 */
export async function listAgentTargets(sql: Tx, agentId: string): Promise<AgentTarget[]> {
  return sql<AgentTarget[]>`
    select distinct host, port from (
      select d.hostname as host, d.port from databases d where d.agent_id = ${agentId}
      union
      select c.hostname as host, d.port from credentials c join databases d on d.id = c.database_id
       where d.agent_id = ${agentId} and c.hostname is not null
    ) t order by host, port`;
}
