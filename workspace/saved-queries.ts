// Named queries a person keeps for themselves or shares with their organization. A saved query is
// only text: running it goes through the governed pipeline under the runner's own access, so
// sharing one grants nothing.
import * as v from 'valibot';
import { userCaller } from '../audit/actors.ts';
import { forbidden, notFound } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { getDatabase } from '../registry/databases.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import type { Role } from '../store/users.ts';
import {
  deleteSavedQuery,
  findSavedQuery,
  insertSavedQuery,
  listSavedQueries,
  type SavedQueryRow,
  updateSavedQuery,
} from '../store/workspace.ts';

export interface Person {
  orgId: string;
  userId: string;
  role: Role;
}

/**
 * A saved query, as POST /api/v1/saved-queries and the console's save form both send it: checked
 * here, by saveQuery and editSavedQuery, so both doors answer the same field errors.
 */
export const SavedQueryInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200)),
  // Blank SQL saves nothing anyone could run.
  statement: v.pipe(
    v.string(),
    v.check((s) => s.trim() !== '', 'statement is required'),
    v.maxLength(100_000),
  ),
  database_id: v.optional(
    v.nullable(v.pipe(v.string(), v.regex(/^db_[0-9A-Z]{26}$/, 'must be a database id'))),
  ),
  shared: v.optional(v.boolean()),
});
/** A change to a saved query: any of its fields. */
export const SavedQueryChange = v.partial(SavedQueryInput);
export type SavedQueryFields = v.InferInput<typeof SavedQueryInput>;

export function savedQueries(sql: Tx, who: Person): Promise<SavedQueryRow[]> {
  return listSavedQueries(sql, who.orgId, who.userId);
}

/** One the person may read: their own, or one shared with the organization (404 otherwise). */
export async function savedQuery(sql: Tx, who: Person, id: string): Promise<SavedQueryRow> {
  const row = await findSavedQuery(sql, who.orgId, id);
  if (!row || (row.owner_id !== who.userId && !row.shared)) throw notFound('no such saved query');
  return row;
}

export async function saveQuery(sql: Tx, who: Person, raw: SavedQueryFields): Promise<SavedQueryRow> {
  const f = parseInput(SavedQueryInput, raw);
  const id = newId('sq');
  await insertSavedQuery(sql, {
    id,
    org_id: who.orgId,
    owner_id: who.userId,
    name: f.name,
    statement: f.statement,
    database_id: await visibleDatabase(sql, who, f.database_id ?? null),
    shared: f.shared ?? false,
  });
  return savedQuery(sql, who, id);
}

/** Only the owner edits; a shared query is read by others, never rewritten under its owner's name. */
export async function editSavedQuery(
  sql: Tx,
  who: Person,
  id: string,
  raw: Partial<SavedQueryFields>,
): Promise<SavedQueryRow> {
  // Input errors come before lookups, as on every other door.
  const f = parseInput(SavedQueryChange, raw);
  const row = await savedQuery(sql, who, id);
  if (row.owner_id !== who.userId) throw forbidden('only the person who saved this query may change it');
  await updateSavedQuery(sql, id, {
    ...(f.name !== undefined ? { name: f.name } : {}),
    ...(f.statement !== undefined ? { statement: f.statement } : {}),
    ...(f.database_id !== undefined ? { database_id: await visibleDatabase(sql, who, f.database_id) } : {}),
    ...(f.shared !== undefined ? { shared: f.shared } : {}),
  });
  return savedQuery(sql, who, id);
}

/** The owner deletes; an admin may also remove a shared query from the organization's list. */
export async function removeSavedQuery(sql: Tx, who: Person, id: string): Promise<void> {
  const row = await savedQuery(sql, who, id);
  const admin = who.role === 'admin' || who.role === 'super_admin';
  if (row.owner_id !== who.userId && !admin)
    throw forbidden('only the person who saved this query or an admin may delete it');
  await deleteSavedQuery(sql, id);
}

/** A database the person can see, or 404 as for any database they cannot (SPEC.md 2.2). */
async function visibleDatabase(sql: Tx, who: Person, id: string | null): Promise<string | null> {
  if (id === null) return null;
  await getDatabase(sql, userCaller(who.orgId, { kind: 'user', userId: who.userId, role: who.role }), id);
  return id;
}
