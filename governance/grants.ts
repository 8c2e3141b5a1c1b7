import { notFound, validationFailed } from '../core/errors.ts';
import { findDatabase } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { deleteGrant, type GrantRow, type GrantWithUser, insertGrant, listGrants } from '../store/grants.ts';
import { newId } from '../store/ids.ts';
import { findUserById } from '../store/users.ts';
import { canSee } from './access.ts';
import type { QueryActor } from './query.ts';

/**
 * The database, if the (admin) actor can see it. An admin manages grants only of databases
 * visible to them: a restricted database stays a 404 to an admin without a grant (SPEC.md 2.2),
 * while super admins and organization API keys see every database.
 */
async function visibleDatabase(sql: Tx, orgId: string, actor: QueryActor, databaseId: string) {
  const db = await findDatabase(sql, orgId, databaseId);
  if (!db || !(await canSee(sql, db, actor))) throw notFound('no such database');
  return db;
}

export async function listDatabaseGrants(
  sql: Tx,
  orgId: string,
  actor: QueryActor,
  databaseId: string,
): Promise<GrantWithUser[]> {
  await visibleDatabase(sql, orgId, actor, databaseId);
  return listGrants(sql, databaseId);
}

/** Grants a user of the same organization access; granting twice returns the existing grant. */
export async function grantAccess(
  sql: Tx,
  orgId: string,
  actor: QueryActor,
  databaseId: string,
  userId: string,
): Promise<{ grant: GrantRow; created: boolean }> {
  await visibleDatabase(sql, orgId, actor, databaseId);
  const user = await findUserById(sql, userId);
  if (!user || user.org_id !== orgId)
    throw validationFailed([{ path: 'user_id', message: 'no such user in this organization' }]);
  return insertGrant(sql, {
    id: newId('grt'),
    databaseId,
    userId,
    grantedBy: actor.kind === 'user' ? actor.userId : null,
  });
}

/** Revokes a grant. Queries and approvals of that user are refused from the next check on. */
export async function revokeAccess(
  sql: Tx,
  orgId: string,
  actor: QueryActor,
  databaseId: string,
  userId: string,
): Promise<GrantRow> {
  await visibleDatabase(sql, orgId, actor, databaseId);
  const removed = await deleteGrant(sql, databaseId, userId);
  if (!removed) throw notFound('no grant for this user');
  return removed;
}
