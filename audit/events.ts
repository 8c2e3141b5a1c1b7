import type { ParamValue } from '../adapters/types.ts';
import { governedQueries } from '../core/metrics.ts';
import { currentTraceIds, inSpan } from '../core/tracing.ts';
import {
  AUDIT_BODY_COLUMNS,
  type AuditInsert,
  type AuditRow,
  appendAudit,
  auditChainPage,
  auditHead,
  auditOrganizations,
} from '../store/audit.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { encodeParams } from '../store/params.ts';
import type { QueryActor, QueryOrigin } from './actors.ts';
import { type AuditBody, bodyText, entryHash, GENESIS_HASH } from './chain.ts';
import type { EventSubjects, EventType } from './event-types.ts';

/** The facts of one query attempt, as the pipeline knows them (DESIGN.md pipeline step 6). */
export interface AuditAttempt {
  orgId: string;
  actor: QueryActor;
  origin: QueryOrigin;
  databaseId: string | null;
  credentialId: string | null;
  statement: string;
  params: readonly ParamValue[];
  classification: 'read' | 'write' | null;
  outcome: AuditRow['outcome'];
  rowsReturned?: number | null;
  durationMs?: number | null;
  review?: ReviewFacts | null;
  /** Why it was denied or how it failed; the server's message without secrets, or the pending request. */
  detail?: string | null;
}

/** What the review gate knew when the query ran or waited. */
export interface ReviewFacts {
  requestId: string;
  reviewsRequired: number;
  /** Users whose approvals counted (valid at the time of the attempt). */
  approvedBy: string[];
  bypassed: boolean;
  bypassReason: string | null;
}

const AUDITED = Symbol('countersign.audited');

/**
 * Marks an error the pipeline has already written to the audit log, so that a caller which audits
 * what it sees go wrong (an MCP tool call) does not write the same attempt twice.
 */
export function markAudited<E>(err: E): E {
  if (typeof err === 'object' && err !== null) (err as Record<symbol, boolean>)[AUDITED] = true;
  return err;
}

export function wasAudited(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, boolean>)[AUDITED] === true;
}

/** Appends one entry to the organization's hash chain. Throws when the store refuses: fail closed. */
export async function recordAttempt(sql: Tx, a: AuditAttempt): Promise<{ id: string; seq: bigint }> {
  const trace = traceSubject();
  const entry = { ...toEntry(a), ...(trace ? { subject: trace } : {}) };
  const { seq } = await inSpan('governed query audit', {}, () =>
    appendAudit(sql, entry, bodyText(bodyOf(entry))),
  );
  governedQueries.inc({ origin: a.origin, outcome: a.outcome });
  return { id: entry.id, seq };
}

/**
 * With tracing on, the trace of the request (or run) an entry was written in, kept in its subject:
 * a hashed column already, so the chain's column list and every older entry's hash stay as they are.
 */
function traceSubject(): { trace_id: string } | null {
  const ids = currentTraceIds();
  return ids ? { trace_id: ids.trace_id } : null;
}

function toEntry(a: AuditAttempt): AuditInsert {
  const actor = a.actor;
  const user = actor.kind === 'user' ? actor : null;
  return {
    id: newId('aud'),
    org_id: a.orgId,
    // Milliseconds, so the stored timestamp reads back as the very string that was hashed.
    occurred_at: new Date(),
    actor_kind: actor.kind,
    actor_user_id: user?.userId ?? null,
    // An API key acting for a user (x-act-as-user) is named beside the user.
    actor_api_key_id: actor.kind === 'api_key' ? actor.apiKeyId : (user?.viaApiKeyId ?? null),
    actor_workflow_run_id: actor.kind === 'workflow_run' ? actor.runId : (user?.workflowRun?.runId ?? null),
    actor_workflow_id:
      actor.kind === 'workflow_run' ? actor.workflowId : (user?.workflowRun?.workflowId ?? null),
    origin: a.origin,
    // SPEC.md 1.4: AI entries are labeled AI-originated and name the OAuth client.
    ai_client_id: a.origin === 'ai' ? (user?.oauthClient?.id ?? null) : null,
    ai_client_name: a.origin === 'ai' ? (user?.oauthClient?.name ?? null) : null,
    database_id: a.databaseId,
    credential_id: a.credentialId,
    statement: a.statement,
    params: encodeParams(a.params),
    classification: a.classification,
    rows_returned: a.rowsReturned ?? null,
    duration_ms: a.durationMs === undefined || a.durationMs === null ? null : Math.round(a.durationMs),
    request_id: a.review?.requestId ?? null,
    reviews_required: a.review?.reviewsRequired ?? null,
    approved_by: a.review?.approvedBy ?? [],
    bypassed: a.review?.bypassed ?? false,
    bypass_reason: a.review?.bypassReason ?? null,
    outcome: a.outcome,
    detail: a.detail ?? null,
    event: 'query',
    subject: null,
  };
}

/** Something other than a query that changed or used access: who did it, to what, how it ended. */
export interface AuditEvent<K extends EventType = EventType> {
  orgId: string;
  actor: QueryActor;
  origin: QueryOrigin;
  /** One of the kinds audit/event-types.ts defines: 'user.created', 'policy.updated', … */
  event: K;
  /** Ids and values the event is about, as audit/event-types.ts defines them; never a secret. */
  subject: EventSubjects[K];
  databaseId?: string | null;
  outcome: AuditRow['outcome'];
  /** One readable line for people scanning the log. */
  detail: string;
}

/** Appends a non-query event to the organization's hash chain (the same chain as queries). */
export async function recordEvent<K extends EventType>(
  sql: Tx,
  ev: AuditEvent<K>,
): Promise<{ id: string; seq: bigint }> {
  const entry: AuditInsert = {
    ...toEntry({
      orgId: ev.orgId,
      actor: ev.actor,
      origin: ev.origin,
      databaseId: ev.databaseId ?? null,
      credentialId: null,
      statement: '',
      params: [],
      classification: null,
      outcome: ev.outcome,
      detail: ev.detail,
    }),
    event: ev.event,
    subject: withTrace(ev.subject),
  };
  const { seq } = await appendAudit(sql, entry, bodyText(bodyOf(entry)));
  return { id: entry.id, seq };
}

function withTrace<S>(subject: S): S {
  const trace = traceSubject();
  return trace && typeof subject === 'object' && subject !== null ? { ...subject, ...trace } : subject;
}

/** The hashed columns of an entry, from a row to insert or a row read back. */
export function bodyOf(e: AuditInsert | AuditRow): AuditBody {
  const body = Object.fromEntries(AUDIT_BODY_COLUMNS.map((k) => [k, e[k]])) as Omit<AuditBody, 'occurred_at'>;
  return {
    ...body,
    occurred_at: e.occurred_at.toISOString(),
    // canonicalJson leaves undefined keys out: query entries hash exactly as they always did,
    // and a query entry has a subject only when written inside a trace (its trace_id).
    event: e.event === 'query' ? undefined : e.event,
    subject: e.event === 'query' ? (e.subject ?? undefined) : (e.subject ?? null),
  };
}

/** The result of checking one organization's chain. */
export interface ChainReport {
  orgId: string;
  entries: number;
  ok: boolean;
  /** The first entry that does not verify, and why. */
  broken: { seq: string; id: string | null; reason: string } | null;
}

const VERIFY_BATCH = 1000;

/**
 * Recomputes every hash of an organization's chain in order: each entry must follow the one
 * before it (seq + 1, prev_hash = its hash) and hash to what it stores, and the last one must be
 * the chain head. An entry changed, removed or inserted anywhere shows up here.
 */
export async function verifyAuditChain(sql: Tx, orgId: string): Promise<ChainReport> {
  let prevHash = GENESIS_HASH;
  let prevSeq = 0n;
  let entries = 0;
  const broken = (seq: bigint, id: string | null, reason: string): ChainReport => ({
    orgId,
    entries,
    ok: false,
    broken: { seq: seq.toString(), id, reason },
  });
  for (;;) {
    const rows = await auditChainPage(sql, orgId, prevSeq, VERIFY_BATCH);
    for (const row of rows) {
      if (row.seq !== prevSeq + 1n) return broken(prevSeq + 1n, null, `entry ${prevSeq + 1n} is missing`);
      if (row.prev_hash !== prevHash)
        return broken(row.seq, row.id, 'prev_hash does not match the entry before');
      if (entryHash(prevHash, row.seq, bodyText(bodyOf(row))) !== row.hash)
        return broken(row.seq, row.id, 'the entry does not match its hash (altered)');
      prevHash = row.hash;
      prevSeq = row.seq;
      entries++;
    }
    if (rows.length < VERIFY_BATCH) break;
  }
  const head = await auditHead(sql, orgId);
  if (head && (head.seq !== prevSeq || head.hash !== prevHash))
    return broken(head.seq, null, 'the chain ends before its recorded head (entries removed at the end)');
  return { orgId, entries, ok: true, broken: null };
}

/** Verifies every organization's chain (`countersign verify-audit`). */
export async function verifyAllChains(sql: Tx): Promise<ChainReport[]> {
  const out: ChainReport[] = [];
  for (const orgId of await auditOrganizations(sql)) out.push(await verifyAuditChain(sql, orgId));
  return out;
}

/**
 * Runs `fn` in a transaction, or inside the one `sql` already is: a change and its audit event
 * commit together or not at all.
 */
export function inTransaction<T>(sql: Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if ('begin' in sql) return sql.begin((tx) => fn(tx)) as Promise<T>;
  return fn(sql);
}
