// How an agent is named in errors and what its status looks like in responses.
import type { AgentRow } from '../store/agents.ts';

/** `agent "edge-1" (agt_…)`, or `agent agt_…` when the name is unknown. */
export function agentLabel(id: string, name: string | null): string {
  return name ? `agent "${name}" (${id})` : `agent ${id}`;
}

/**
 * Connected per the store, as any replica sees it: a tunnel opened and not closed since, and a
 * heartbeat within three intervals (a process that died never wrote its disconnect).
 */
export function isConnectedRow(row: AgentRow, heartbeatMs: number, now: Date): boolean {
  if (row.revoked_at || !row.connected_at) return false;
  if (row.disconnected_at && row.disconnected_at >= row.connected_at) return false;
  return row.last_seen_at !== null && now.getTime() - row.last_seen_at.getTime() <= heartbeatMs * 3;
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

export function agentStatus(row: AgentRow, heartbeatMs: number, now = new Date()): AgentStatus {
  return {
    id: row.id,
    name: row.name,
    connected: isConnectedRow(row, heartbeatMs, now),
    last_seen_at: row.last_seen_at?.toISOString() ?? null,
    version: row.version,
    revoked: row.revoked_at !== null,
  };
}
