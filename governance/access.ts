import { notFound } from '../core/errors.ts';
import {
  type CredentialRow,
  type DatabaseRow,
  findCredential,
  findDatabase,
  hasGrant,
  listCredentials,
} from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import type { GovernedQuery, QueryActor } from './query.ts';

/** Finds the database and credential the actor may use, or answers 404 (never 403: no existence leak). */
export async function resolveTarget(
  sql: Tx,
  q: Pick<GovernedQuery, 'orgId' | 'actor' | 'databaseId' | 'credentialId'>,
): Promise<{ db: DatabaseRow; cred: CredentialRow }> {
  // The three lookups do not depend on each other's answers: one round trip instead of three.
  // The credential and the grant are keyed by the database id asked for, and count only if that
  // database turns out to exist in the organization.
  const user = q.actor.kind === 'user' && q.actor.role !== 'super_admin' ? q.actor.userId : null;
  const [db, cred, granted] = await Promise.all([
    findDatabase(sql, q.orgId, q.databaseId),
    q.credentialId
      ? findCredential(sql, q.databaseId, q.credentialId)
      : listCredentials(sql, [q.databaseId]).then((all) => all.find((c) => c.default_credential) ?? null),
    user ? hasGrant(sql, q.databaseId, user) : Promise.resolve(true),
  ]);
  // SPEC.md 2.2 restrict_access: without a grant the database does not exist for this user.
  if (!db || (db.restrict_access && !granted)) throw notFound('no such database');
  if (!cred) throw notFound(q.credentialId ? 'no such credential' : 'the database has no default credential');
  return { db, cred };
}

/** restrict_access databases are visible only to super admins and granted users (SPEC.md 2.2). */
export async function canSee(sql: Tx, db: DatabaseRow, actor: QueryActor): Promise<boolean> {
  if (!db.restrict_access) return true;
  // Organization keys and workflow runs are the organization's own automation.
  if (actor.kind !== 'user') return true;
  if (actor.role === 'super_admin') return true;
  return hasGrant(sql, db.id, actor.userId);
}
