// A person's console history: their own statements only, newest first.
import { notFound } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { findHistory, type HistoryRow, listHistory } from '../store/workspace.ts';
import type { Person } from './saved-queries.ts';

export function queryHistory(sql: Tx, who: Person, search: string | null): Promise<HistoryRow[]> {
  return listHistory(sql, who.orgId, who.userId, search?.trim() ? search.trim() : null);
}

export async function historyEntry(sql: Tx, who: Person, id: string): Promise<HistoryRow> {
  const row = await findHistory(sql, who.userId, id);
  if (!row || row.org_id !== who.orgId) throw notFound('no such history entry');
  return row;
}
