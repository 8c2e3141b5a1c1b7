import { notFound } from '../core/errors.ts';
import { type CredentialRow, type DatabaseRow, hasGrant } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { findAccessTarget } from '../store/grants.ts';
import type { GovernedQuery, QueryActor } from './query.ts';

/** Finds the database and credential the actor may use, or answers 404 (never 403: no existence leak). */
export async function resolveTarget(
  sql: Tx,
  q: Pick<GovernedQuery, 'orgId' | 'actor' | 'databaseId' | 'credentialId'>,
): Promise<{ db: DatabaseRow; cred: CredentialRow }> {
  // One statement finds the database, the credential and the grant (one round trip).
  const user = q.actor.kind === 'user' && q.actor.role !== 'super_admin' ? q.actor.userId : null;
  const target = await findAccessTarget(sql, {
    orgId: q.orgId,
    databaseId: q.databaseId,
    credentialId: q.credentialId ?? null,
    userId: user,
  });
  // SPEC.md 2.2 restrict_access: without a grant the database does not exist for this user.
  if (!target || (target.db.restrict_access && !target.granted)) throw notFound('no such database');
  const { db, cred } = target;
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
