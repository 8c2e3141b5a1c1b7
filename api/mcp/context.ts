// What every MCP tool works with: the caller (the token's user and client) and shared helpers.
import type * as v from 'valibot';
import type { SchemaTable } from '../../adapters/types.ts';
import type { Deps } from '../../config/runtime.ts';
import { usableCredentials } from '../../governance/access.ts';
import { aiClientRefusal } from '../../governance/ai-clients.ts';
import { recordEvent } from '../../governance/audit.ts';
import { connectionConfigFor, poolVersion } from '../../governance/connections.ts';
import { type QueryActor, QueryDeniedError, resolveTarget } from '../../governance/query.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import {
  type CredentialRow,
  type DatabaseRow,
  listCredentials,
  listDatabases,
} from '../../store/databases.ts';

/** One tool call: the service's dependencies and who is calling. */
export interface ToolContext {
  deps: Deps;
  caller: OAuthCaller;
  /** The governance actor: the user, labeled with the OAuth client (SPEC.md 1.4). */
  actor: Extract<QueryActor, { kind: 'user' }>;
  orgId: string;
  /** Set once the call entered the governed pipeline, which audits it from there. */
  piped?: boolean;
}

/** A tool: its MCP definition, its valibot input schema and what it does. */
export interface ToolDef<S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  title: string;
  description: string;
  /** What the tool takes; tools/list shows its JSON Schema, generated from it (tool-schema.ts). */
  input: S;
  /** Reads only (MCP ToolAnnotations.readOnlyHint). */
  readOnly: boolean;
  run(ctx: ToolContext, input: v.InferOutput<S>): Promise<unknown>;
}

export function toolContext(deps: Deps, caller: OAuthCaller): ToolContext {
  const { principal, client } = caller;
  return {
    deps,
    caller,
    orgId: principal.orgId,
    actor: { kind: 'user', userId: principal.userId, role: principal.role, oauthClient: client },
  };
}

/** Databases the user can see that allow AI use (SPEC.md 8 ai_enabled), with their AI credentials. */
export async function aiDatabases(
  ctx: ToolContext,
): Promise<Array<{ db: DatabaseRow; credentials: CredentialRow[] }>> {
  const visibleTo = ctx.actor.role === 'super_admin' ? null : ctx.actor.userId;
  const rows = await listDatabases(ctx.deps.sql, ctx.orgId, { limit: 1000, visibleTo });
  // The organization may keep this client to some databases (governance/ai-clients.ts).
  const only = ctx.caller.client.limits.databaseIds;
  const enabled = rows.filter((db) => db.ai_enabled && (!only || only.includes(db.id)));
  const creds = await usableCredentials(
    ctx.deps.sql,
    ctx.actor,
    await listCredentials(
      ctx.deps.sql,
      enabled.map((d) => d.id),
    ),
  );
  return enabled.map((db) => ({
    db,
    credentials: creds.filter((c) => c.database_id === db.id && c.ai_allowed),
  }));
}

/**
 * The database and credential a schema tool reads as: the user must see the database
 * (404 otherwise), the database must allow AI use, and the credential must be ai_allowed
 * (the named one, else the default, else the first allowed).
 */
export async function aiTarget(
  ctx: ToolContext,
  databaseId: string,
  credentialId?: string,
): Promise<{ db: DatabaseRow; cred: CredentialRow }> {
  const { db, cred } = await resolveTarget(ctx.deps.sql, {
    orgId: ctx.orgId,
    actor: ctx.actor,
    databaseId,
    credentialId,
  });
  if (!db.ai_enabled) throw new QueryDeniedError(`AI access is not enabled on database ${db.name}`);
  const refusal = await aiClientRefusal(ctx.deps.sql, ctx.orgId, ctx.caller.client, db);
  if (refusal) throw new QueryDeniedError(refusal);
  if (cred.ai_allowed) return { db, cred };
  if (credentialId) throw new QueryDeniedError(`the AI may not run as credential ${cred.username}`);
  const usable = await usableCredentials(
    ctx.deps.sql,
    ctx.actor,
    await listCredentials(ctx.deps.sql, [db.id]),
  );
  const allowed = usable.find((c) => c.ai_allowed);
  if (!allowed) throw new QueryDeniedError(`database ${db.name} has no credential the AI may use`);
  return { db, cred: allowed };
}

export async function readSchema(
  ctx: ToolContext,
  db: DatabaseRow,
  cred: CredentialRow,
): Promise<SchemaTable[]> {
  const { deps } = ctx;
  const pool = deps.pools.acquire(
    { databaseId: db.id, credentialId: cred.id, version: poolVersion(db, cred) },
    () => connectionConfigFor(deps.keyring, db, cred),
  );
  return pool.readSchema();
}

/** How entries written before tool calls were events of their own began (read back by query_history). */
export const TOOL_AUDIT_PREFIX = '-- mcp tool: ';

/**
 * Audits a non-query tool call as AI-originated, naming the client (SPEC.md 1.4), as an event of
 * its own kind ('mcp.tool'): it is no statement, and is not counted as a governed query.
 */
export async function auditToolCall(
  ctx: ToolContext,
  call: {
    tool: string;
    args: unknown;
    databaseId: string | null;
    outcome: 'allowed' | 'denied' | 'failed';
    detail?: string;
  },
): Promise<void> {
  await recordEvent(ctx.deps.sql, {
    orgId: ctx.orgId,
    actor: ctx.actor,
    origin: 'ai',
    event: 'mcp.tool',
    subject: { tool: call.tool, arguments: bounded(call.args ?? {}) },
    databaseId: call.databaseId,
    outcome: call.outcome,
    detail: call.detail ?? `MCP tool ${call.tool}`,
  });
}

/** Result values as JSON: bigints as strings, bytes as base64, dates as ISO 8601. */
export function jsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(jsonValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonValue(v)]));
  }
  return value;
}

/** Tool arguments as audited: the same structure, strings cut at 200 characters, 50 keys at most. */
function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 3) return '…';
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => bounded(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 50)
      .map(([k, v]) => [k, bounded(v, depth + 1)]),
  );
}
