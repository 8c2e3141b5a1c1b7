// A person's console history: their own statements only, newest first.
import { notFound } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import {
  findHistory,
  HISTORY_KEPT,
  type HistoryLine,
  type HistoryRow,
  insertHistory,
  listHistory,
  listHistoryLines,
} from '../store/workspace.ts';
import type { Person } from './saved-queries.ts';

/**
 * How many lines the console shows until the person asks for the whole history. Each line costs
 * the page about 20 µs to read and render; the newest ones are the ones run again.
 */
export const HISTORY_SHOWN = 25;

const searchOf = (search: string | null) => (search?.trim() ? search.trim() : null);

export function queryHistory(sql: Tx, who: Person, search: string | null): Promise<HistoryRow[]> {
  return listHistory(sql, who.orgId, who.userId, searchOf(search));
}

/**
 * The lines the console lists — the HISTORY_SHOWN newest, or with `all` every line kept — and
 * whether the history holds more.
 */
export function historyLines(
  sql: Tx,
  who: Person,
  search: string | null,
  all: boolean,
): Promise<HistoryListing> {
  return listing(all, (count) => listHistoryLines(sql, who.orgId, who.userId, searchOf(search), count));
}

export interface HistoryListing {
  lines: HistoryLine[];
  more: boolean;
}

/** A run's line, as the console adds it to the person's history. */
export type NewHistoryLine = Omit<HistoryRow, 'org_id' | 'user_id' | 'ran_at'>;

/** Adds a run's line to the person's history and answers what historyLines would list after it, in one round trip. */
export function addHistoryLine(
  sql: Tx,
  who: Person,
  line: NewHistoryLine,
  search: string | null,
  all: boolean,
): Promise<HistoryListing> {
  return listing(all, (count) =>
    insertHistory(
      sql,
      { ...line, org_id: who.orgId, user_id: who.userId },
      { search: searchOf(search), older: count },
    ),
  );
}

/** The lines listed, read one more than listed to know whether there are more, with no count query. */
async function listing(
  all: boolean,
  read: (count: number) => Promise<HistoryLine[]>,
): Promise<HistoryListing> {
  const limit = all ? HISTORY_KEPT : HISTORY_SHOWN;
  const lines = await read(limit + 1);
  return { lines: lines.slice(0, limit), more: lines.length > limit };
}

export async function historyEntry(sql: Tx, who: Person, id: string): Promise<HistoryRow> {
  const row = await findHistory(sql, who.userId, id);
  if (!row || row.org_id !== who.orgId) throw notFound('no such history entry');
  return row;
}
