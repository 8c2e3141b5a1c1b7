// Searching and exporting the audit log (governance/README.md "Audit API"). Entries are shown
// as stored, including their chain fields, so an export can be verified outside the service;
// only a failed query's error is shown as the reader may read it: the caller passes the viewer
// (governance/audit-view.ts decides; audit/ only stores and shows).

import { AUDIT_BODY_COLUMNS, type AuditFilter, type AuditRow, searchAudit } from '../store/audit.ts';
import type { Tx } from '../store/db.ts';

/** An entry as one reader may read it (governance/audit-view.ts auditViewer). */
export type AuditViewer = (e: AuditRow) => Promise<AuditRow>;

/**
 * Whether a text search still finds the entry as shown. The store matches the stored detail;
 * an entry found only through an error hidden from the reader would tell them, one search at a
 * time, what the error quoted.
 */
export function stillMatches(shown: AuditRow, stored: AuditRow, text: string | undefined): boolean {
  if (!text || shown.detail === stored.detail) return true;
  const needle = text.toLowerCase();
  return [shown.statement, shown.ai_client_name, shown.detail].some(
    (field) => field?.toLowerCase().includes(needle) === true,
  );
}

/** One entry as the API shows it. */
export function presentEntry(e: AuditRow) {
  return {
    id: e.id,
    seq: Number(e.seq),
    occurred_at: e.occurred_at.toISOString(),
    actor: {
      kind: e.actor_kind,
      user_id: e.actor_user_id,
      api_key_id: e.actor_api_key_id,
      workflow_run_id: e.actor_workflow_run_id,
      workflow_id: e.actor_workflow_id,
    },
    origin: e.origin,
    ai_originated: e.origin === 'ai',
    ai_client: e.ai_client_id ? { id: e.ai_client_id, name: e.ai_client_name } : null,
    database_id: e.database_id,
    credential_id: e.credential_id,
    statement: e.statement,
    params: e.params,
    classification: e.classification,
    rows_returned: e.rows_returned,
    duration_ms: e.duration_ms,
    review: {
      request_id: e.request_id,
      reviews_required: e.reviews_required,
      approved_by: e.approved_by,
      bypassed: e.bypassed,
      bypass_reason: e.bypass_reason,
    },
    outcome: e.outcome,
    detail: e.detail,
    event: e.event,
    subject: e.subject,
    prev_hash: e.prev_hash,
    hash: e.hash,
  };
}

/**
 * One page of a search as `show` presents it, newest first; the cursor is the last entry's seq
 * (of those searched: an entry a text search found only through a hidden error is left out).
 */
export async function searchEntries(
  sql: Tx,
  orgId: string,
  show: AuditViewer,
  filter: AuditFilter,
  page: { cursor?: string | undefined; limit: number },
): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
  const rows = await searchAudit(sql, orgId, filter, {
    order: 'desc',
    beforeSeq: page.cursor ? BigInt(page.cursor) : undefined,
    limit: page.limit + 1,
  });
  const searched = rows.slice(0, page.limit);
  const items: AuditRow[] = [];
  for (const row of searched) {
    const shown = await show(row);
    if (stillMatches(shown, row, filter.text)) items.push(shown);
  }
  return {
    items,
    nextCursor: rows.length > page.limit ? (searched.at(-1)?.seq.toString() ?? null) : null,
  };
}

const EXPORT_BATCH = 500;

/** Every matching entry as `show` presents it, oldest first, in batches (exports stream this). */
export async function* exportEntries(
  sql: Tx,
  orgId: string,
  show: AuditViewer,
  filter: AuditFilter,
): AsyncGenerator<AuditRow> {
  let after: bigint | undefined;
  for (;;) {
    const rows = await searchAudit(sql, orgId, filter, {
      order: 'asc',
      afterSeq: after,
      limit: EXPORT_BATCH,
    });
    for (const row of rows) {
      const shown = await show(row);
      if (stillMatches(shown, row, filter.text)) yield shown;
    }
    if (rows.length < EXPORT_BATCH) return;
    after = rows.at(-1)!.seq;
  }
}

/** The export's columns: the entry's hashed body (one list, store/audit.ts) in the chain's order. */
export const CSV_COLUMNS: readonly (keyof AuditRow)[] = [
  'id',
  'seq',
  ...AUDIT_BODY_COLUMNS.filter((c) => c !== 'id' && c !== 'org_id'),
  'event',
  'subject',
  'prev_hash',
  'hash',
];

/** One CSV line (RFC 4180 quoting), ending in CRLF. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

export function csvRow(e: AuditRow): string {
  return csvLine(
    CSV_COLUMNS.map((c) => {
      const v = e[c];
      if (v instanceof Date) return v.toISOString();
      if (typeof v === 'object' && v !== null) return JSON.stringify(v);
      return v;
    }),
  );
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  // OWASP CSV injection: a cell a spreadsheet would take for a formula is prefixed with a quote.
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
