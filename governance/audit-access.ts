// Who may read the audit log, and reading it as them: the one rule behind GET /api/v1/audit, its
// export, the audit page and the audit trail on a run page. Admins and super admins read their
// organization's log; members read none of it (SPEC.md 5). Each entry is then shown as the reader
// may read it (audit-view.ts: a failed query's error only to those allowed to read its values).
import { actorIsAdmin, type Caller } from '../audit/actors.ts';
import { exportEntries, searchEntries } from '../audit/export.ts';
import { forbidden } from '../core/errors.ts';
import { type AuditFilter, type AuditRow, searchAudit } from '../store/audit.ts';
import type { Tx } from '../store/db.ts';
import { auditViewer, shownTo } from './audit-view.ts';

/** May the caller read the audit log of their organization? */
export function mayReadAudit(caller: Caller): boolean {
  return actorIsAdmin(caller.actor);
}

function readerOnly(caller: Caller): void {
  if (!mayReadAudit(caller)) throw forbidden('this needs the admin role');
}

/** One page of a search, newest first, as the caller may read it; 403 for a member. */
export async function searchAuditLog(
  sql: Tx,
  caller: Caller,
  filter: AuditFilter,
  page: { cursor?: string | undefined; limit: number },
): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
  readerOnly(caller);
  return searchEntries(sql, caller.orgId, auditViewer(sql, caller.actor), filter, page);
}

/** Every matching entry, oldest first, as the caller may read it (the export streams this). */
export function exportAuditLog(sql: Tx, caller: Caller, filter: AuditFilter): AsyncGenerator<AuditRow> {
  readerOnly(caller);
  return exportEntries(sql, caller.orgId, auditViewer(sql, caller.actor), filter);
}

/**
 * A workflow run's own trail (its steps' queries and decisions, oldest first), or null when the
 * caller may not read the log: the run page shows it only to readers of the log.
 */
export async function runAuditTrail(sql: Tx, caller: Caller, runId: string): Promise<AuditRow[] | null> {
  if (!mayReadAudit(caller)) return null;
  const rows = await searchAudit(sql, caller.orgId, { actor: runId }, { order: 'asc', limit: 100 });
  return shownTo(sql, caller.actor, rows);
}
