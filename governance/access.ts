import type { AdapterName } from '../adapters/types.ts';
import { notFound } from '../core/errors.ts';
import { accessBarrier } from '../store/access-cache.ts';
import { type CredentialRow, type DatabaseRow, hasGrant } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import { findAccessTarget, usableCredentialIds } from '../store/grants.ts';
import { findCredentialTarget } from '../store/workflows.ts';
import type { GovernedQuery, QueryActor } from './types.ts';

/**
 * Finds the database and credential the actor may use, or answers 404 (never 403: no existence
 * leak), with the id of the data-protection policy that applies to the actor there (null: none).
 */
export async function resolveTarget(
  sql: Tx,
  q: Pick<GovernedQuery, 'orgId' | 'actor' | 'databaseId' | 'credentialId'> & {
    origin?: GovernedQuery['origin'];
  },
): Promise<{ db: DatabaseRow; cred: CredentialRow; policyId: string | null }> {
  // One statement finds the database, the credential, the grants and the policy (one round trip).
  const person = q.actor.kind === 'user' && q.actor.role !== 'super_admin' ? q.actor : null;
  const target = await findAccessTarget(sql, {
    orgId: q.orgId,
    databaseId: q.databaseId,
    credentialId: q.credentialId ?? null,
    userId: person?.userId ?? null,
    role: person?.role ?? null,
    forAi: q.origin === 'ai',
    // Policies are assigned to people and roles; API keys and workflow runs act for the organization.
    policyFor: q.actor.kind === 'user' ? { userId: q.actor.userId, role: q.actor.role } : null,
  });
  // SPEC.md 2.2 restrict_access: without a grant the database does not exist for this user.
  if (!target || (target.db.restrict_access && !target.granted)) throw notFound('no such database');
  const { db, cred } = target;
  // A restricted credential works only for the users and roles granted it; to anyone else it is
  // not there (404, like a database), so an open credential cannot stand in for a reviewed one.
  if (!cred || !target.credentialGranted)
    throw notFound(
      q.credentialId ? 'no such credential' : 'the database has no default credential you may use',
    );
  return { db, cred, policyId: target.policyId };
}

/** restrict_access databases are visible only to super admins and granted users (SPEC.md 2.2). */
export async function canSee(sql: Tx, db: DatabaseRow, actor: QueryActor): Promise<boolean> {
  if (!db.restrict_access) return true;
  // Organization keys and workflow runs are the organization's own automation.
  if (actor.kind !== 'user') return true;
  if (actor.role === 'super_admin') return true;
  return hasGrant(sql, db.id, actor.userId);
}

/**
 * The credentials a listing shows: a member sees only those they may use; admins, who manage
 * credentials, and the organization's own automation see all of them.
 */
export async function listableCredentials(
  sql: Tx,
  actor: QueryActor,
  credentials: CredentialRow[],
): Promise<CredentialRow[]> {
  if (actor.kind !== 'user' || actor.role !== 'member') return credentials;
  const usable = await usableCredentialIds(
    sql,
    credentials.map((c) => c.id),
    actor,
  );
  return credentials.filter((c) => usable.has(c.id));
}

/** Of these credentials, the ones the actor may run as (resolveTarget's rule, for many at once). */
export async function usableCredentials(
  sql: Tx,
  actor: QueryActor,
  credentials: CredentialRow[],
): Promise<CredentialRow[]> {
  if (actor.kind !== 'user' || actor.role === 'super_admin') return credentials;
  const usable = await usableCredentialIds(
    sql,
    credentials.map((c) => c.id),
    actor,
  );
  return credentials.filter((c) => usable.has(c.id));
}

/**
 * Waits until every process's access cache has dropped what a change made stale
 * (store/access-cache.ts rule 3), so whoever sees a revocation's answer is no longer let in by a
 * cached decision.
 */
export async function settleAccess(sql: Tx): Promise<void> {
  await accessBarrier(sql);
}

/** The database a credential belongs to, within the organization, and the credential's timeout. */
export interface CredentialTarget {
  database_id: string;
  adapter: AdapterName;
  timeout: number | null;
}

/**
 * The target of a credential named by a workflow step or a dashboard panel (its engine decides the
 * placeholder style the SQL is rendered in); null when the credential or its database is gone.
 * Whether the caller may use it is resolveTarget's decision, made by the pipeline.
 */
export function credentialTarget(
  sql: Tx,
  orgId: string,
  credentialId: string,
): Promise<CredentialTarget | null> {
  return findCredentialTarget(sql, orgId, credentialId);
}
