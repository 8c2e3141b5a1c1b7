// Per-client limits on AI access: an organization's admins disable a connected AI
// client or keep it to some databases, on top of what its person may do (DESIGN.md pipeline
// step 2). AI clients only ever read (SPEC.md 1.4), so no per-client read-only switch is needed.

import * as v from 'valibot';
import { actorIsAdmin, type Caller } from '../audit/actors.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import { forbidden, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import {
  type AiClientControlRow,
  findAiClientControl,
  listOrgAiClients,
  type OrgAiClient,
  upsertAiClientControl,
} from '../store/ai-clients.ts';
import { findDatabase, listDatabases } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { findClient } from '../store/oauth.ts';
import type { AiClientLimits } from './types.ts';

export async function aiClientLimits(sql: Tx, orgId: string, clientId: string): Promise<AiClientLimits> {
  const row = await findAiClientControl(sql, orgId, clientId);
  return { disabled: row?.disabled ?? false, databaseIds: row?.database_ids ?? null };
}

/** Why this client may not use this database, or null when it may. */
export async function aiClientRefusal(
  sql: Tx,
  orgId: string,
  client: { id: string; name: string; limits?: AiClientLimits },
  database: { id: string; name: string },
): Promise<string | null> {
  // MCP read the limits with the grant; a request run later on its author's behalf reads them now.
  const limits = client.limits ?? (await aiClientLimits(sql, orgId, client.id));
  if (limits.disabled) return `your organization has disabled the AI client ${client.name}`;
  if (limits.databaseIds && !limits.databaseIds.includes(database.id))
    return `your organization keeps the AI client ${client.name} away from database ${database.name}`;
  return null;
}

/**
 * One AI client's limits, as PUT /api/v1/ai-clients/:clientId and the Organization page's form
 * both send them: checked here, by setAiClientControl, so both doors answer the same errors.
 */
export const AiClientLimitsInput = v.pipe(
  v.object({
    disabled: v.boolean(),
    database_ids: v.nullable(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.maxLength(500))),
  }),
  v.description(
    'Limits on one AI client for the whole organization: disabled refuses every request it makes; database_ids keeps it to those databases (null: no limit beyond its person).',
  ),
  v.examples([
    { disabled: false, database_ids: ['db_01JD0000000000000000000000'] },
    { disabled: true, database_ids: null },
  ]),
);
export type AiClientLimitsBody = v.InferInput<typeof AiClientLimitsInput>;

/** Sets a client's limits; admins only; audited as an access change. */
export async function setAiClientControl(
  sql: Tx,
  { orgId, actor, origin }: Caller,
  clientId: string,
  body: AiClientLimitsBody,
): Promise<AiClientControlRow> {
  if (actor.kind === 'workflow_run' || (actor.kind === 'user' && actor.role === 'member'))
    throw forbidden('this needs the admin role');
  const parsed = parseInput(AiClientLimitsInput, body);
  const input = { disabled: parsed.disabled, databaseIds: parsed.database_ids };
  const client = await findClient(sql, clientId);
  if (!client) throw validationFailed([{ path: 'client_id', message: 'no such AI client' }]);
  for (const [i, id] of (input.databaseIds ?? []).entries()) {
    if (!(await findDatabase(sql, orgId, id)))
      throw validationFailed([
        { path: `database_ids.${i}`, message: 'no such database in this organization' },
      ]);
  }
  // The limits and their audit event commit together.
  return inTransaction(sql, async (tx) => {
    const row = await upsertAiClientControl(tx, {
      orgId,
      clientId,
      disabled: input.disabled,
      databaseIds: input.databaseIds,
      updatedBy: actor.kind === 'user' ? actor.userId : null,
    });
    await recordEvent(tx, {
      orgId,
      actor,
      origin,
      event: 'ai_client.limited',
      subject: { client_id: clientId, disabled: input.disabled, database_ids: input.databaseIds },
      outcome: 'allowed',
      detail: `${client.client_name}: ${input.disabled ? 'disabled' : input.databaseIds ? `only ${input.databaseIds.length} database(s)` : 'no limit'}`,
    });
    return row;
  });
}

/** The AI clients people of the organization connected, with their limits; admins only. */
export async function listAiClients(sql: Tx, caller: Caller): Promise<OrgAiClient[]> {
  if (!actorIsAdmin(caller.actor)) throw forbidden('only an admin may list AI clients');
  return listOrgAiClients(sql, caller.orgId);
}

/**
 * The databases an AI client may be limited to: every AI-enabled database of the organization,
 * restricted ones included, since only an admin sets limits.
 */
export async function aiLimitChoices(
  sql: Tx,
  caller: Caller,
): Promise<{ id: string; name: string; aiEnabled: boolean }[]> {
  if (!actorIsAdmin(caller.actor)) throw forbidden('only an admin may limit AI clients');
  // Every database, those with AI off marked: an admin sees what there is to choose from.
  return (await listDatabases(sql, caller.orgId, { limit: 500, visibleTo: null })).map((d) => ({
    id: d.id,
    name: d.name,
    aiEnabled: d.ai_enabled,
  }));
}
