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

/** Everything the caller decides; seq, prev_hash and hash come from the organization's chain head. */
export type AuditInsert = Omit<AuditRow, 'seq' | 'prev_hash' | 'hash'>;

/**
 * Appends one entry in a single statement. Updating the organization's head row takes its row
 * lock, so concurrent appends of one organization queue there, and in READ COMMITTED the update
 * re-reads the head after the wait: every entry chains onto the one committed just before it.
 * `body` is the canonical text of the entry (governance/audit-chain.ts bodyText).
 */
export async function appendAudit(
  sql: Tx,
  e: AuditInsert,
  body: string,
): Promise<{ seq: bigint; hash: string }> {
  const [row] = await sql<{ seq: bigint; hash: string }[]>`
    with head as (
      update audit_heads
      set prev_hash = hash,
          seq = seq + 1,
          hash = encode(sha256(convert_to(hash || ':' || (seq + 1)::text || ':' || ${body}::text, 'UTF8')), 'hex')
      where org_id = ${e.org_id}
      returning seq, hash, prev_hash
    )
    insert into audit_log (
      id, org_id, seq, occurred_at, actor_kind, actor_user_id, actor_api_key_id, actor_workflow_run_id,
      actor_workflow_id, origin, ai_client_id, ai_client_name, database_id, credential_id, statement,
      params, classification, rows_returned, duration_ms, request_id, reviews_required, approved_by,
      bypassed, bypass_reason, outcome, detail, event, subject, prev_hash, hash)
    select
      ${e.id}::text, ${e.org_id}::text, head.seq, ${e.occurred_at.toISOString()}::timestamptz,
      ${e.actor_kind}::text, ${e.actor_user_id}::text, ${e.actor_api_key_id}::text,
      ${e.actor_workflow_run_id}::text, ${e.actor_workflow_id}::text, ${e.origin}::text,
      ${e.ai_client_id}::text, ${e.ai_client_name}::text, ${e.database_id}::text, ${e.credential_id}::text,
      ${e.statement}::text, ${sql.json(e.params as never)}::jsonb, ${e.classification}::text,
      ${e.rows_returned}::int, ${e.duration_ms}::int, ${e.request_id}::text, ${e.reviews_required}::int,
      ${sql.json(e.approved_by)}::jsonb, ${e.bypassed}::boolean, ${e.bypass_reason}::text,
      ${e.outcome}::text, ${e.detail}::text, ${e.event}::text,
      ${e.subject === null ? null : sql.json(e.subject as never)}::jsonb, head.prev_hash, head.hash
    from head
    returning seq, hash`;
  if (!row) throw new Error(`organization ${e.org_id} has no audit chain head`);
  return row;
}

/** Search filters (api/routes/audit.ts); every one optional. */
export interface AuditFilter {
  /** A user, API key or workflow-run id: matches entries where it is any of the actor columns. */
  actor?: string | undefined;
  origin?: AuditRow['origin'] | undefined;
  /** One kind of event ('query', 'user.disabled', …), or a family by prefix ('user.'). */
  event?: string | undefined;
  databaseId?: string | undefined;
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
