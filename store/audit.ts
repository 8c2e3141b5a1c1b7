import { appendGrouped, appendNow, isPool } from './audit-writer.ts';
import type { Tx } from './db.ts';

/** One audit entry as stored (store/migrations/0004_governance.sql). */
export interface AuditRow {
  id: string;
  org_id: string;
  seq: bigint;
  occurred_at: Date;
  actor_kind: 'user' | 'api_key' | 'workflow_run';
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  actor_workflow_run_id: string | null;
  actor_workflow_id: string | null;
  origin: 'user' | 'dashboard' | 'workflow' | 'ai';
  ai_client_id: string | null;
  ai_client_name: string | null;
  database_id: string | null;
  credential_id: string | null;
  statement: string;
  params: unknown;
  classification: 'read' | 'write' | null;
  rows_returned: number | null;
  duration_ms: number | null;
  request_id: string | null;
  reviews_required: number | null;
  approved_by: string[];
  bypassed: boolean;
  bypass_reason: string | null;
  outcome: 'allowed' | 'pending' | 'denied' | 'failed';
  detail: string | null;
  /** 'query' for a governed statement; otherwise what happened, e.g. 'user.role_changed', 'mcp.tool'. */
  event: string;
  /** What a non-query event was about (ids, old and new values); null for queries. */
  subject: unknown;
  prev_hash: string;
  hash: string;
}

/**
 * The one list of an entry's hashed columns, besides `event` and `subject` (hashed on non-query
 * events, and on a query entry when it has one: its trace) and the chain's own seq, prev_hash and hash. The hash chain (audit/chain.ts
 * AuditBody), the entry's body (audit/events.ts bodyOf) and the append's insert
 * (store/audit-writer.ts, checked against this list by store/audit-writer.test.ts) all follow it.
 */
export const AUDIT_BODY_COLUMNS = [
  'id',
  'org_id',
  'occurred_at',
  'actor_kind',
  'actor_user_id',
  'actor_api_key_id',
  'actor_workflow_run_id',
  'actor_workflow_id',
  'origin',
  'ai_client_id',
  'ai_client_name',
  'database_id',
  'credential_id',
  'statement',
  'params',
  'classification',
  'rows_returned',
  'duration_ms',
  'request_id',
  'reviews_required',
  'approved_by',
  'bypassed',
  'bypass_reason',
  'outcome',
  'detail',
] as const satisfies readonly (keyof AuditRow)[];
export type AuditBodyColumn = (typeof AUDIT_BODY_COLUMNS)[number];

// Every stored column is in the list, or is one of the five named above: a compile error otherwise.
type Unlisted = Exclude<keyof AuditRow, AuditBodyColumn | 'event' | 'subject' | 'seq' | 'prev_hash' | 'hash'>;
const everyColumnListed: Unlisted extends never ? true : Unlisted = true;
void everyColumnListed;

/** Everything the caller decides; seq, prev_hash and hash come from the organization's chain head. */
export type AuditInsert = Omit<AuditRow, 'seq' | 'prev_hash' | 'hash'>;

/**
 * Appends one entry to its organization's chain (audit_append, store/migrations/0020_audit_batch.sql).
 * The row is stored from `body`, the canonical text of the entry (audit/chain.ts
 * bodyText) that is hashed, so the two cannot disagree; of `e` only the id and organization are read.
 * On a root pool the entry joins that pool's group commit (store/audit-writer.ts); inside a
 * transaction it is appended at once on the transaction, so a rollback takes it back (and its
 * seq: the head row is rolled back too, leaving no gap).
 */
export async function appendAudit(
  sql: Tx,
  e: Pick<AuditInsert, 'id' | 'org_id'>,
  body: string,
): Promise<{ seq: bigint; hash: string }> {
  const entry = { id: e.id, body };
  if (isPool(sql)) return appendGrouped(sql, e.org_id, entry);
  const [row] = await appendNow(sql, e.org_id, [entry]);
  return row!;
}

/** Search filters (api/rest/audit.ts); every one optional. */
export interface AuditFilter {
  /** A user, API key or workflow-run id: matches entries where it is any of the actor columns. */
  actor?: string | undefined;
  origin?: AuditRow['origin'] | undefined;
  /** One kind of event ('query', 'user.disabled', …), or a family by prefix ('user.'). */
  event?: string | undefined;
  databaseId?: string | undefined;
  /** Entries about one of these databases, or about no database at all. */
  databaseIdsOrNone?: string[] | undefined;
  outcome?: AuditRow['outcome'] | undefined;
  bypassedOnly?: boolean | undefined;
  /** Case-insensitive text in the statement or the AI client's name. */
  text?: string | undefined;
  requestId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * Keyset-paginated by seq: newest first before `beforeSeq` (search), or oldest first after
 * `afterSeq` (exports).
 */
export async function searchAudit(
  sql: Tx,
  orgId: string,
  f: AuditFilter,
  page: {
    order: 'asc' | 'desc';
    beforeSeq?: bigint | undefined;
    afterSeq?: bigint | undefined;
    limit: number;
  },
): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    select * from audit_log
    where org_id = ${orgId}
      ${f.actor ? sql`and (actor_user_id = ${f.actor} or actor_api_key_id = ${f.actor} or actor_workflow_run_id = ${f.actor})` : sql``}
      ${f.origin ? sql`and origin = ${f.origin}` : sql``}
      ${
        f.event === undefined
          ? sql``
          : f.event.endsWith('.')
            ? sql`and starts_with(event, ${f.event})`
            : sql`and event = ${f.event}`
      }
      ${f.databaseId ? sql`and database_id = ${f.databaseId}` : sql``}
      ${f.databaseIdsOrNone ? sql`and (database_id is null or database_id = any(${f.databaseIdsOrNone}::text[]))` : sql``}
      ${f.outcome ? sql`and outcome = ${f.outcome}` : sql``}
      ${f.bypassedOnly ? sql`and bypassed` : sql``}
      ${
        // strpos, not LIKE: the text is matched literally, % and _ included.
        f.text
          ? sql`and (strpos(lower(statement), lower(${f.text})) > 0
              or strpos(lower(coalesce(ai_client_name, '')), lower(${f.text})) > 0
              or strpos(lower(coalesce(detail, '')), lower(${f.text})) > 0)`
          : sql``
      }
      ${f.requestId ? sql`and request_id = ${f.requestId}` : sql``}
      ${f.from ? sql`and occurred_at >= ${f.from}` : sql``}
      ${f.to ? sql`and occurred_at < ${f.to}` : sql``}
      ${page.beforeSeq !== undefined ? sql`and seq < ${page.beforeSeq.toString()}::bigint` : sql``}
      ${page.afterSeq !== undefined ? sql`and seq > ${page.afterSeq.toString()}::bigint` : sql``}
    ${page.order === 'asc' ? sql`order by seq` : sql`order by seq desc`}
    limit ${page.limit}`;
}

/** Oldest first from `afterSeq` (exclusive): how the verifier and exports walk a chain. */
export async function auditChainPage(
  sql: Tx,
  orgId: string,
  afterSeq: bigint,
  limit: number,
): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    select * from audit_log where org_id = ${orgId} and seq > ${afterSeq.toString()}::bigint
    order by seq limit ${limit}`;
}

/** The organization's chain head: the newest seq and hash appended. */
export async function auditHead(sql: Tx, orgId: string): Promise<{ seq: bigint; hash: string } | null> {
  const [row] = await sql<
    { seq: bigint; hash: string }[]
  >`select seq, hash from audit_heads where org_id = ${orgId}`;
  return row ?? null;
}

/** Every organization that has a chain. */
export async function auditOrganizations(sql: Tx): Promise<string[]> {
  const rows = await sql<{ org_id: string }[]>`select org_id from audit_heads order by org_id`;
  return rows.map((r) => r.org_id);
}
