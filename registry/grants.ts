import * as v from 'valibot';
import type { Caller, QueryActor } from '../audit/actors.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import { notFound, validationFailed } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import { canSee } from '../governance/access.ts';
import { type CredentialRow, findDatabase, listCredentials } from '../store/databases.ts';
import type { Tx } from '../store/db.ts';
import {
  type CredentialGrantRow,
  deleteCredentialGrant,
  deleteGrant,
  type GrantRow,
  type GrantWithUser,
  insertCredentialGrant,
  insertGrant,
  listCredentialGrants,
  listGrants,
} from '../store/grants.ts';
import { newId } from '../store/ids.ts';
import { findUserById, type Role } from '../store/users.ts';

const UserId = v.pipe(v.string(), v.regex(/^usr_[0-9A-Z]{26}$/, 'must be a user id'));

/**
 * A database grant, as POST /api/v1/desk/databases/:id/grants and the database page's form both
 * send it: checked here, by grantAccess, so both doors answer the same field errors.
 */
export const GrantInput = v.object({ user_id: UserId });
export type GrantBody = v.InferInput<typeof GrantInput>;

/**
 * A credential grant names one user or one role (`{"user_id": …}` or `{"role": "member"}`), as
 * the REST route and the database page's form both send it; checked by grantCredential.
 */
export const CredentialGrantInput = v.pipe(
  v.object({
    user_id: v.optional(UserId),
    role: v.optional(v.picklist(['super_admin', 'admin', 'member'], 'must be super_admin, admin or member')),
  }),
  v.forward(
    v.check((g) => (g.user_id === undefined) !== (g.role === undefined), 'give either user_id or role'),
    ['user_id'],
  ),
  v.description('Who may use a credential with restrict_access: one user, or everyone with one role.'),
  v.examples([{ user_id: 'usr_01JD0000000000000000000000' }, { role: 'member' }]),
);
export type CredentialGrantBody = v.InferInput<typeof CredentialGrantInput>;

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
  { orgId, actor }: Caller,
  databaseId: string,
): Promise<GrantWithUser[]> {
  await visibleDatabase(sql, orgId, actor, databaseId);
  return listGrants(sql, databaseId);
}

/** Grants a user of the same organization access; granting twice returns the existing grant. */
export async function grantAccess(
  sql: Tx,
  { orgId, actor }: Caller,
  databaseId: string,
  body: GrantBody,
): Promise<{ grant: GrantRow; created: boolean }> {
  const userId = parseInput(GrantInput, body).user_id;
  const db = await visibleDatabase(sql, orgId, actor, databaseId);
  const user = await findUserById(sql, userId);
  if (!user || user.org_id !== orgId)
    throw validationFailed([{ path: 'user_id', message: 'no such user in this organization' }]);
  return inTransaction(sql, async (tx) => {
    const out = await insertGrant(tx, {
      id: newId('grt'),
      databaseId,
      userId,
      grantedBy: actor.kind === 'user' ? actor.userId : null,
    });
    if (out.created)
      await recordEvent(tx, {
        orgId,
        actor,
        origin: 'user',
        event: 'database.grant_added',
        subject: { database_id: databaseId, grant_id: out.grant.id, user_id: userId },
        databaseId,
        outcome: 'allowed',
        detail: `${user.email} may use ${db.name}`,
      });
    return out;
  });
}

/** Revokes a grant. Queries and approvals of that user are refused from the next check on. */
export async function revokeAccess(
  sql: Tx,
  { orgId, actor }: Caller,
  databaseId: string,
  userId: string,
): Promise<GrantRow> {
  const db = await visibleDatabase(sql, orgId, actor, databaseId);
  return inTransaction(sql, async (tx) => {
    const removed = await deleteGrant(tx, databaseId, userId);
    if (!removed) throw notFound('no grant for this user');
    await recordEvent(tx, {
      orgId,
      actor,
      origin: 'user',
      event: 'database.grant_removed',
      subject: { database_id: databaseId, grant_id: removed.id, user_id: userId },
      databaseId,
      outcome: 'allowed',
      detail: `${userId} may no longer use ${db.name}`,
    });
    return removed;
  });
}

/** The credential of a database the (admin) actor can see, or 404. */
async function visibleCredential(
  sql: Tx,
  orgId: string,
  actor: QueryActor,
  databaseId: string,
  credentialId: string,
) {
  await visibleDatabase(sql, orgId, actor, databaseId);
  const cred = (await listCredentials(sql, [databaseId])).find((c) => c.id === credentialId);
  if (!cred) throw notFound('no such credential');
  return cred;
}

export async function listCredentialAccess(
  sql: Tx,
  { orgId, actor }: Caller,
  databaseId: string,
  credentialId: string,
): Promise<{ restricted: boolean; grants: CredentialGrantRow[] }> {
  const cred = await visibleCredential(sql, orgId, actor, databaseId, credentialId);
  return { restricted: cred.restrict_access, grants: await listCredentialGrants(sql, credentialId) };
}

/**
 * Lets one user, or everyone with one role, use a restrict_access credential. Granting twice
 * returns the existing grant. A grant on an unrestricted credential is kept for when it is
 * restricted, and changes nothing until then.
 */
export async function grantCredential(
  sql: Tx,
  { orgId, actor }: Caller,
  target: { databaseId: string; credentialId: string },
  body: CredentialGrantBody,
): Promise<{ grant: CredentialGrantRow; created: boolean }> {
  const input = parseInput(CredentialGrantInput, body);
  const to: { userId: string } | { role: Role } = input.user_id
    ? { userId: input.user_id }
    : { role: input.role! };
  const cred = await visibleCredential(sql, orgId, actor, target.databaseId, target.credentialId);
  if ('userId' in to) {
    const user = await findUserById(sql, to.userId);
    if (!user || user.org_id !== orgId)
      throw validationFailed([{ path: 'user_id', message: 'no such user in this organization' }]);
  }
  return inTransaction(sql, async (tx) => {
    const out = await insertCredentialGrant(tx, {
      id: newId('cgr'),
      credentialId: target.credentialId,
      userId: 'userId' in to ? to.userId : null,
      role: 'role' in to ? to.role : null,
      grantedBy: actor.kind === 'user' ? actor.userId : null,
    });
    if (out.created) await auditCredentialGrant(tx, orgId, actor, 'credential.grant_added', cred, out.grant);
    return out;
  });
}

/** Removes a credential grant; its user or role is refused from the next query on. */
export async function revokeCredentialGrant(
  sql: Tx,
  { orgId, actor }: Caller,
  target: { databaseId: string; credentialId: string },
  grantId: string,
): Promise<CredentialGrantRow> {
  const cred = await visibleCredential(sql, orgId, actor, target.databaseId, target.credentialId);
  return inTransaction(sql, async (tx) => {
    const removed = await deleteCredentialGrant(tx, target.credentialId, grantId);
    if (!removed) throw notFound('no such credential grant');
    await auditCredentialGrant(tx, orgId, actor, 'credential.grant_removed', cred, removed);
    return removed;
  });
}

async function auditCredentialGrant(
  tx: Tx,
  orgId: string,
  actor: QueryActor,
  event: 'credential.grant_added' | 'credential.grant_removed',
  cred: CredentialRow,
  grant: CredentialGrantRow,
): Promise<void> {
  const who = grant.user_id ?? `every ${grant.role}`;
  await recordEvent(tx, {
    orgId,
    actor,
    origin: 'user',
    event,
    subject: {
      database_id: cred.database_id,
      credential_id: cred.id,
      grant_id: grant.id,
      user_id: grant.user_id,
      role: grant.role,
    },
    databaseId: cred.database_id,
    outcome: 'allowed',
    detail: `${who} ${event === 'credential.grant_added' ? 'may use' : 'may no longer use'} ${cred.username}`,
  });
}
