// Typed queries for the query console's history and saved queries (0031_workspace.sql).
import type { Tx } from './db.ts';

export interface HistoryRow {
  id: string;
  org_id: string;
  user_id: string;
  database_id: string | null;
  credential_id: string | null;
  statement: string;
  outcome: 'executed' | 'pending_review' | 'error';
  rows_count: number | null;
  duration_ms: number | null;
  ran_at: Date;
}

/** What the console's history list shows of a line. */
export type HistoryLine = Pick<
  HistoryRow,
  'id' | 'statement' | 'outcome' | 'rows_count' | 'duration_ms' | 'ran_at'
>;

export interface SavedQueryRow {
  id: string;
  org_id: string;
  owner_id: string;
  owner_email?: string;
  name: string;
  statement: string;
  database_id: string | null;
  shared: boolean;
  created_at: Date;
  updated_at: Date;
}

/** How many statements a person's history keeps. */
export const HISTORY_KEPT = 100;

/**
 * Adds a line to the person's history, forgets what falls past HISTORY_KEPT, and answers the
 * lines the console lists next, newest first, in one statement (the console waits for it before
 * it shows the page): the new line when it matches `search`, and of the HISTORY_KEPT - 1 older
 * lines the delete keeps, the `older` newest that match. Every part of the statement reads the
 * snapshot from before it, which does not hold the new line and still holds what the delete
 * drops. The delete finds the first line to drop through the (user_id, ran_at) index rather than
 * comparing every line of the person's history with the ones kept.
 */
export async function insertHistory(
  sql: Tx,
  h: Omit<HistoryRow, 'ran_at'>,
  listing: { search: string | null; older: number },
): Promise<HistoryLine[]> {
  const matches = matching(sql, listing.search);
  return sql<HistoryLine[]>`
    with added as (
      insert into query_history
        (id, org_id, user_id, database_id, credential_id, statement, outcome, rows_count, duration_ms)
      values (${h.id}, ${h.org_id}, ${h.user_id}, ${h.database_id}, ${h.credential_id}, ${h.statement},
        ${h.outcome}, ${h.rows_count}, ${h.duration_ms})
      returning ${sql(LINE_COLUMNS)}
    ), trimmed as (
      delete from query_history
      where user_id = ${h.user_id}
        and (ran_at, id) <= (
          select ran_at, id from query_history where user_id = ${h.user_id}
          order by ran_at desc, id desc offset ${HISTORY_KEPT - 1} limit 1)
    )
    select * from added where ${matches}
    union all
    (select * from (
        select ${sql(LINE_COLUMNS)} from query_history
        where org_id = ${h.org_id} and user_id = ${h.user_id}
        order by ran_at desc, id desc limit ${HISTORY_KEPT - 1}) kept
      where ${matches}
      order by ran_at desc, id desc limit ${listing.older})
    order by ran_at desc, id desc`;
}

/** The person's history, newest first; `search` matches the statement case-insensitively. */
export function listHistory(
  sql: Tx,
  orgId: string,
  userId: string,
  search: string | null,
  limit = HISTORY_KEPT,
): Promise<HistoryRow[]> {
  return historyOf<HistoryRow>(sql, null, orgId, userId, search, limit);
}

/** The same, with only what the console's list shows: no owner or target columns to read and parse. */
export function listHistoryLines(
  sql: Tx,
  orgId: string,
  userId: string,
  search: string | null,
  limit: number,
): Promise<HistoryLine[]> {
  return historyOf<HistoryLine>(sql, LINE_COLUMNS, orgId, userId, search, limit);
}

const LINE_COLUMNS: Array<keyof HistoryLine> = [
  'id',
  'statement',
  'outcome',
  'rows_count',
  'duration_ms',
  'ran_at',
];

/** The condition that a line's statement holds `search` (ILIKE, its wildcards and escapes taken literally); without one, every line. */
function matching(sql: Tx, search: string | null) {
  if (!search) return sql`true`;
  return sql`statement ilike ${`%${search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`}`;
}

function historyOf<T extends object>(
  sql: Tx,
  columns: string[] | null,
  orgId: string,
  userId: string,
  search: string | null,
  limit: number,
): Promise<T[]> {
  return sql<T[]>`
    select ${columns ? sql(columns) : sql`*`} from query_history
    where org_id = ${orgId} and user_id = ${userId} and ${matching(sql, search)}
    order by ran_at desc, id desc limit ${limit}`;
}

export async function findHistory(sql: Tx, userId: string, id: string): Promise<HistoryRow | null> {
  const [row] = await sql<HistoryRow[]>`select * from query_history where id = ${id} and user_id = ${userId}`;
  return row ?? null;
}

/** The person's own saved queries and those shared with the organization, by name. */
export async function listSavedQueries(sql: Tx, orgId: string, userId: string): Promise<SavedQueryRow[]> {
  return sql<SavedQueryRow[]>`
    select s.*, u.email as owner_email from saved_queries s join users u on u.id = s.owner_id
    where s.org_id = ${orgId} and (s.owner_id = ${userId} or s.shared)
    order by lower(s.name), s.id`;
}

export async function findSavedQuery(sql: Tx, orgId: string, id: string): Promise<SavedQueryRow | null> {
  const [row] = await sql<SavedQueryRow[]>`
    select s.*, u.email as owner_email from saved_queries s join users u on u.id = s.owner_id
    where s.org_id = ${orgId} and s.id = ${id}`;
  return row ?? null;
}

export async function insertSavedQuery(
  sql: Tx,
  q: Pick<SavedQueryRow, 'id' | 'org_id' | 'owner_id' | 'name' | 'statement' | 'database_id' | 'shared'>,
): Promise<void> {
  await sql`
    insert into saved_queries (id, org_id, owner_id, name, statement, database_id, shared)
    values (${q.id}, ${q.org_id}, ${q.owner_id}, ${q.name}, ${q.statement}, ${q.database_id}, ${q.shared})`;
}

export async function updateSavedQuery(
  sql: Tx,
  id: string,
  q: Partial<Pick<SavedQueryRow, 'name' | 'statement' | 'database_id' | 'shared'>>,
): Promise<void> {
  await sql`
    update saved_queries set
      name = coalesce(${q.name ?? null}, name),
      statement = coalesce(${q.statement ?? null}, statement),
      database_id = ${q.database_id === undefined ? sql`database_id` : q.database_id},
      shared = coalesce(${q.shared ?? null}, shared),
      updated_at = now()
    where id = ${id}`;
}

export async function deleteSavedQuery(sql: Tx, id: string): Promise<void> {
  await sql`delete from saved_queries where id = ${id}`;
}
