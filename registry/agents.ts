// Agents as an organization sees them: registration (the token is shown once), revocation,
// the list with tunnel status, token authentication for the tunnel endpoint, and the check that
// a database's agent_id names a live agent of its organization.
import * as v from 'valibot';
import { actorUserId, type Caller } from '../audit/actors.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import { conflict, notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import {
  type AgentRow,
  findAgent,
  findAgents,
  findLiveAgentByName,
  insertAgent,
  listAgents as listAgentRows,
  revokeAgent as revokeAgentRow,
} from '../store/agents.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { mintSecret, parseSecret, secretMatches } from '../store/secrets.ts';
import { type AgentStatus, agentStatus } from '../tunnels/agent-status.ts';

/** Token kind: `csagent_<agent ULID>_<43 random chars>` (store/secrets.ts). */
export const AGENT_TOKEN_KIND = 'csagent';

/** What the agent functions need; `agents` is the in-process hub, when there is one. */
export interface AgentDeps {
  sql: Tx;
  agents?: { disconnect(agentId: string): void };
}

/**
 * A new agent, as POST /api/v1/agents and the Organization page's form both send it: checked
 * here, by registerAgent, so both doors (and the CLI) answer the same field errors.
 */
export const AgentInput = v.object({
  name: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'name is required'),
    v.maxLength(100),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, dot, dash and underscore'),
  ),
});

/**
 * The host's operator (the CLI): acts on an organization's agents but is no actor of the
 * organization, so nothing of theirs enters its audit chain.
 */
export interface HostOperator {
  orgId: string;
  actor: null;
}

/**
 * Registers an agent; the token is in the result once and stored only as its hash. The caller is
 * who did it in the organization's audit chain.
 */
export async function registerAgent(
  deps: AgentDeps,
  caller: Caller | HostOperator,
  name: string,
): Promise<{ agent: AgentStatus & { created_at: string }; token: string }> {
  const { orgId, actor } = caller;
  const input = { name: parseInput(AgentInput, { name }).name };
  if (await findLiveAgentByName(deps.sql, orgId, input.name))
    throw conflict(`an agent named ${input.name} already exists`);
  const id = newId('agt');
  const minted = mintSecret(AGENT_TOKEN_KIND, id);
  const row = await inTransaction(deps.sql, async (tx) => {
    const inserted = await insertAgent(tx, {
      id,
      orgId,
      name: input.name,
      secretHash: minted.hash,
      createdBy: actor ? actorUserId(actor) : null,
    });
    if (caller.actor)
      await recordEvent(tx, {
        orgId,
        actor: caller.actor,
        origin: caller.origin,
        event: 'agent.registered',
        subject: { agent_id: id, name: input.name },
        outcome: 'allowed',
        detail: `registered agent ${input.name}`,
      });
    return inserted;
  });
  return { agent: present(row), token: minted.secret };
}

/** Revokes the agent and cuts its tunnel here (other replicas within a heartbeat). */
export async function revokeAgent(deps: AgentDeps, caller: Caller | HostOperator, id: string): Promise<void> {
  const { orgId } = caller;
  await inTransaction(deps.sql, async (tx) => {
    const row = await revokeAgentRow(tx, orgId, id);
    if (!row) throw notFound('no such agent');
    if (caller.actor)
      await recordEvent(tx, {
        orgId,
        actor: caller.actor,
        origin: caller.origin,
        event: 'agent.revoked',
        subject: { agent_id: id },
        outcome: 'allowed',
        detail: `revoked agent ${row.name}`,
      });
  });
  deps.agents?.disconnect(id);
}

export async function listAgents(deps: AgentDeps, orgId: string) {
  const rows = await listAgentRows(deps.sql, orgId);
  return rows.map((r) => present(r));
}

function present(row: AgentRow) {
  return { ...agentStatus(row), created_at: row.created_at.toISOString() };
}

/**
 * The live agent a tunnel token belongs to, or null. Unknown, malformed, wrong and revoked
 * tokens are alike to the caller (one 401), and the hash is compared in constant time.
 */
export async function authenticateAgent(sql: Tx, token: string): Promise<AgentRow | null> {
  const parsed = parseSecret(token);
  if (!parsed || parsed.kind !== AGENT_TOKEN_KIND) return null;
  const row = await findAgent(sql, `agt_${parsed.ulid}`);
  if (!row || !secretMatches(token, row.secret_hash) || row.revoked_at) return null;
  return row;
}

/** 422 naming `agent_id` unless it names a live agent of the organization (null clears it). */
export async function checkAgentReference(
  sql: Tx,
  orgId: string,
  agentId: string | null | undefined,
): Promise<void> {
  if (agentId === undefined || agentId === null) return;
  const [row] = await findAgents(sql, orgId, [agentId]);
  if (!row)
    throw validationFailed([{ path: 'agent_id', message: `no agent ${agentId} in this organization` }]);
  if (row.revoked_at) throw validationFailed([{ path: 'agent_id', message: `agent ${agentId} is revoked` }]);
}

/** The `agent` status of each database that names one, by agent id. */
export async function agentStatuses(
  sql: Tx,
  orgId: string,
  agentIds: Array<string | null>,
): Promise<Map<string, AgentStatus>> {
  const ids = [...new Set(agentIds.filter((x): x is string => x !== null))];
  const rows = await findAgents(sql, orgId, ids);
  return new Map(rows.map((r) => [r.id, agentStatus(r)]));
}
