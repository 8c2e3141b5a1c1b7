// What every MCP tool works with: the caller (the token's user and client) and shared helpers.
import type * as v from 'valibot';
import type { SchemaTable } from '../../adapters/types.ts';
import type { Caller } from '../../audit/actors.ts';
import { recordEvent } from '../../audit/events.ts';
import type { Deps } from '../../core/deps.ts';
import {
  type AiActor,
  aiDatabases as aiDatabasesFor,
  aiTarget as aiTargetFor,
  readTargetSchema,
} from '../../governance/ai-access.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import type { CredentialRow, DatabaseRow } from '../../store/databases.ts';

/** One tool call: the service's dependencies and who is calling. */
export interface ToolContext {
  deps: Deps;
  caller: OAuthCaller;
  /** The governance actor: the user, labeled with the OAuth client (SPEC.md 1.4). */
  actor: AiActor;
  orgId: string;
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
  /**
   * A successful call is a governed query, which the pipeline audits itself (one entry per
   * attempt, errors it refused marked as audited): callTool adds no 'mcp.tool' event for it.
   */
  runsQueries?: true;
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

/** The tool's caller for domain functions (audit/actors.ts): the person through the AI client. */
export function aiCaller(ctx: ToolContext): Caller<AiActor> {
  return { orgId: ctx.orgId, actor: ctx.actor, origin: 'ai' };
}

/** Databases the user can see that allow AI use, with their AI credentials (governance/ai-access.ts). */
export function aiDatabases(
  ctx: ToolContext,
): Promise<Array<{ db: DatabaseRow; credentials: CredentialRow[] }>> {
  return aiDatabasesFor(ctx.deps.sql, aiCaller(ctx));
}

/** The database and credential a schema tool reads as (governance/ai-access.ts has the rules). */
export function aiTarget(
  ctx: ToolContext,
  databaseId: string,
  credentialId?: string,
): Promise<{ db: DatabaseRow; cred: CredentialRow }> {
  return aiTargetFor(ctx.deps.sql, aiCaller(ctx), { databaseId, credentialId });
}

export function readSchema(ctx: ToolContext, db: DatabaseRow, cred: CredentialRow): Promise<SchemaTable[]> {
  return readTargetSchema(ctx.deps, db, cred);
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
