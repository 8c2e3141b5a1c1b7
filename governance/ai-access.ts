// The AI rules (SPEC.md 8, DESIGN.md pipeline step 2) for what an AI client reaches outside a
// query: which databases it is shown, and which database and credential a schema tool reads as.
// Queries apply the same rules in the pipeline (execute.ts originLimits -> checkAiUse), so MCP
// tools hold no access rule of their own.
import type { SchemaTable } from '../adapters/types.ts';
import type { Caller } from '../audit/actors.ts';
import type { Deps } from '../core/deps.ts';
import { type AuditRow, searchAudit } from '../store/audit.ts';
import { type CredentialRow, type DatabaseRow, listCredentials, listDatabases } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { resolveTarget, usableCredentials } from './access.ts';
import { aiClientLimits, aiClientRefusal } from './ai-clients.ts';
import { poolFor } from './connections.ts';
import { QueryDeniedError } from './errors.ts';
import type { AiClientLimits, QueryActor } from './types.ts';

/** A person acting through an AI client (the OAuth grant's user and client). */
export type AiActor = Extract<QueryActor, { kind: 'user' }> & {
  oauthClient: { id: string; name: string; limits?: AiClientLimits };
};

/** Refuses unless the database and credential allow AI use and the organization lets this client in. */
export async function checkAiUse(
  sql: Tx,
  { orgId, actor }: Caller,
  db: DatabaseRow,
  cred: CredentialRow,
): Promise<void> {
  if (!db.ai_enabled) throw new QueryDeniedError(`AI access is not enabled on database ${db.name}`);
  if (!cred.ai_allowed) throw new QueryDeniedError(`the AI may not run as credential ${cred.username}`);
  const client = actor.kind === 'user' ? actor.oauthClient : undefined;
  const refusal = client ? await aiClientRefusal(sql, orgId, client, db) : null;
  if (refusal) throw new QueryDeniedError(refusal);
}

/** Databases the person can see that allow AI use and this client may reach, with their AI credentials. */
export async function aiDatabases(
  sql: Tx,
  { orgId, actor }: Caller<AiActor>,
): Promise<Array<{ db: DatabaseRow; credentials: CredentialRow[] }>> {
  const visibleTo = actor.role === 'super_admin' ? null : actor.userId;
  const rows = await listDatabases(sql, orgId, { limit: 1000, visibleTo });
  const only = actor.oauthClient.limits?.databaseIds;
  const enabled = rows.filter((db) => db.ai_enabled && (!only || only.includes(db.id)));
  const creds = await usableCredentials(
    sql,
    actor,
    await listCredentials(
      sql,
      enabled.map((d) => d.id),
    ),
  );
  return enabled.map((db) => ({
    db,
    credentials: creds.filter((c) => c.database_id === db.id && c.ai_allowed),
  }));
}

/**
 * The database and credential an AI client reads as: the person must see the database (404
 * otherwise), and the AI rules must allow it; without a named credential, the AI default
 * (store/grants.ts findAccessTarget `forAi`), the same one a query gets.
 */
export async function aiTarget(
  sql: Tx,
  caller: Caller<AiActor>,
  target: { databaseId: string; credentialId?: string | undefined },
): Promise<{ db: DatabaseRow; cred: CredentialRow }> {
  const { db, cred } = await resolveTarget(sql, { ...caller, ...target, origin: 'ai' });
  await checkAiUse(sql, caller, db, cred);
  return { db, cred };
}

/** The tables and columns the credential sees, read through its pool (its secret stays here). */
export function readTargetSchema(
  deps: Pick<Deps, 'pools' | 'keyring'>,
  db: DatabaseRow,
  cred: CredentialRow,
): Promise<SchemaTable[]> {
  return poolFor(deps, db, cred).readSchema();
}

/**
 * The person's recent AI-originated audit entries, newest first, as this client may see them:
 * only entries on databases the person can still see and the organization lets this client use
 * (its "Only these databases" limit), so a client kept away from a database does not read there
 * what other clients ran. Entries about no database (tool calls such as list_databases) stay.
 */
export async function aiHistory(
  sql: Tx,
  { orgId, actor }: Caller<AiActor>,
  limit: number,
): Promise<AuditRow[]> {
  const limits = actor.oauthClient.limits ?? (await aiClientLimits(sql, orgId, actor.oauthClient.id));
  const visibleTo = actor.role === 'super_admin' ? null : actor.userId;
  const visible = (await listDatabases(sql, orgId, { limit: 1000, visibleTo })).map((db) => db.id);
  const only = limits.databaseIds;
  const databaseIds = only ? visible.filter((id) => only.includes(id)) : visible;
  return searchAudit(
    sql,
    orgId,
    { actor: actor.userId, origin: 'ai', databaseIdsOrNone: databaseIds },
    { order: 'desc', limit },
  );
}
