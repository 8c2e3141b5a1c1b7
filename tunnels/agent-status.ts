// How an agent is named in errors and what its status looks like in responses.
import type { AgentRow } from '../store/agents.ts';

/** `agent "edge-1" (agt_…)`, or `agent agt_…` when the name is unknown. */
export function agentLabel(id: string, name: string | null): string {
  return name ? `agent "${name}" (${id})` : `agent ${id}`;
}

/**
 * The holder's lease on a tunnel (agent/README.md "Replicas"): the process holding it renews
 * `last_seen_at` every LEASE_RENEW_MS; a row not renewed for LEASE_MS belongs to a process that
 * died or hangs, and no relay goes there. Five renewals fit in a lease, so a live holder that is
 * briefly slow keeps it. Compared with this process's clock: replicas need synchronised clocks.
 */
export const LEASE_RENEW_MS = 2_000;
export const LEASE_MS = 10_000;

/**
 * Connected per the store, as any replica sees it: a tunnel opened and not closed since, and a
 * lease renewed within LEASE_MS (a process that died or hangs never wrote its disconnect).
 */
export function isConnectedRow(row: AgentRow, now: Date = new Date()): boolean {
  if (row.revoked_at || !row.connected_at) return false;
  if (row.disconnected_at && row.disconnected_at >= row.connected_at) return false;
  return row.last_seen_at !== null && now.getTime() - row.last_seen_at.getTime() <= LEASE_MS;
}

/** The `agent` object of a database response and of the agents list. */
export interface AgentStatus {
  id: string;
  name: string;
  connected: boolean;
  last_seen_at: string | null;
  version: string | null;
  revoked: boolean;
}

export function agentStatus(row: AgentRow, now = new Date()): AgentStatus {
  return {
    id: row.id,
    name: row.name,
    connected: isConnectedRow(row, now),
    last_seen_at: row.last_seen_at?.toISOString() ?? null,
    version: row.version,
    revoked: row.revoked_at !== null,
  };
}
