// The people of an organization as its members see them: names, roles and status, for pickers,
// listings and "who did this". Every read is scoped to the caller's organization, so no entry
// point can name a person of another organization by guessing an id (SPEC.md 4.1: 404, not 403).
import type { Caller } from '../audit/actors.ts';
import type { Tx } from '../store/db.ts';
import { findUserById, findUsersByEmail, listUsers, type UserRow } from '../store/users.ts';

/** Everyone of the caller's organization, deleted people included (the pages mark them). */
export async function listPeople(sql: Tx, caller: Caller): Promise<UserRow[]> {
  return listUsers(sql, caller.orgId);
}

/** One person of the caller's organization, or null (another organization's, deleted or unknown). */
export async function findPerson(sql: Tx, caller: Caller, userId: string): Promise<UserRow | null> {
  const user = await findUserById(sql, userId);
  if (!user || user.org_id !== caller.orgId || user.deleted_at) return null;
  return user;
}

/**
 * The accounts an address signs in as, before anyone is authenticated: the sign-in throttle asks
 * which of them a remembered browser belongs to (identity/known-device.ts). Ids only.
 */
export async function accountIdsForEmail(sql: Tx, email: string): Promise<string[]> {
  return (await findUsersByEmail(sql, email)).map((u) => u.id);
}
