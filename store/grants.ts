import { cachedAccessRead } from './access-cache.ts';
import type { CredentialRow, DatabaseRow } from './databases.ts';
import type { Tx } from './db.ts';

/** Access to a restrict_access database for one user (store/migrations/0002_databases.sql). */
export interface GrantRow {
  id: string;
  database_id: string;
  user_id: string;
  granted_by: string | null;
  created_at: Date;
}

/** A grant with the user it names, for listings. */
export interface GrantWithUser extends GrantRow {
  email: string;
  role: string;
}

/** Inserts the grant, or returns the one already there (granting twice changes nothing). */
export async function insertGrant(
  sql: Tx,
  g: { id: string; databaseId: string; userId: string; grantedBy: string | null },
): Promise<{ grant: GrantRow; created: boolean }> {
  const [inserted] = await sql<GrantRow[]>`
    insert into database_grants (id, database_id, user_id, granted_by)
    values (${g.id}, ${g.databaseId}, ${g.userId}, ${g.grantedBy})
    on conflict (database_id, user_id) do nothing
    returning *`;
  if (inserted) return { grant: inserted, created: true };
  const [existing] = await sql<GrantRow[]>`
    select * from database_grants where database_id = ${g.databaseId} and user_id = ${g.userId}`;
  return { grant: existing!, created: false };
}

export async function listGrants(sql: Tx, databaseId: string): Promise<GrantWithUser[]> {
  return sql<GrantWithUser[]>`
    select g.*, u.email, u.role from database_grants g join users u on u.id = g.user_id
    where g.database_id = ${databaseId} order by g.id`;
}

/** Removes the grant; returns it, or null when there was none. */
export async function deleteGrant(sql: Tx, databaseId: string, userId: string): Promise<GrantRow | null> {
  const [row] = await sql<GrantRow[]>`
    delete from database_grants where database_id = ${databaseId} and user_id = ${userId} returning *`;
  return row ?? null;
}

/** What access needs of one database, in one round trip (governance/access.ts resolveTarget). */
export interface AccessTarget {
  db: DatabaseRow;
  /** The credential asked for, else the default one; null when there is none. */
  cred: CredentialRow | null;
  /** Whether `userId` holds a grant (true when no user was given). */
  granted: boolean;
  /** Whether the user may use the credential: it is open, or granted to them or their role. */
  credentialGranted: boolean;
  /**
   * The data-protection policy assigned to `policyFor` on this database (a personal assignment
   * before one by role), read in the same statement; null when none applies.
   */
  policyId: string | null;
}

/**
 * The database of the organization, the credential (by id, else the default one) and the
 * user's grant, joined in one statement: the pipeline's access check costs one round trip.
 */
export async function findAccessTarget(
  sql: Tx,
  q: {
    orgId: string;
    databaseId: string;
    credentialId: string | null;
    userId: string | null;
    role: string | null;
    /**
     * Without a named credential, an AI client gets the default if it may use it, else the first
     * credential it may use that allows AI, else the default (which the AI rules then refuse).
     */
    forAi?: boolean;
    /** The person whose data-protection policy applies (super admins included); null for automation. */
    policyFor?: { userId: string; role: string } | null;
  },
): Promise<AccessTarget | null> {
  // Every table this statement joins notifies store/access-cache.ts when it changes.
  return cachedAccessRead(sql, `target:${JSON.stringify(q)}`, () => readAccessTarget(sql, q));
}

async function readAccessTarget(
  sql: Tx,
  q: Parameters<typeof findAccessTarget>[1],
): Promise<AccessTarget | null> {
  const usable = q.userId
    ? sql`(c.restrict_access is not true or exists (select 1 from credential_grants cg
           where cg.credential_id = c.id and (cg.user_id = ${q.userId} or cg.role = ${q.role})))`
    : sql`true`;
  const [row] = await sql<
    Array<
      DatabaseRow &
        CredentialColumns & { granted: boolean; credential_granted: boolean; policy_id: string | null }
    >
  >`
    select d.*,
      c.id as cred_id, c.database_id as cred_database_id, c.username as cred_username,
      c.password_enc as cred_password_enc, c.hostname as cred_hostname, c.ai_allowed as cred_ai_allowed,
      c.timeout as cred_timeout, c.reviews_required as cred_reviews_required,
      c.default_credential as cred_default_credential, c.created_at as cred_created_at,
      c.updated_at as cred_updated_at, c.restrict_access as cred_restrict_access,
      c.justification_required as cred_justification_required,
      c.large_write_rows as cred_large_write_rows, c.risk_reviews as cred_risk_reviews,
      c.undo_max_rows as cred_undo_max_rows,
      ${
        q.userId
          ? sql`exists (select 1 from database_grants g where g.database_id = d.id and g.user_id = ${q.userId})`
          : sql`true`
      } as granted,
      ${usable} as credential_granted,
      ${
        q.policyFor
          ? sql`(select a.policy_id from data_protection_assignments a
                 where a.database_id = d.id and (a.user_id = ${q.policyFor.userId} or a.role = ${q.policyFor.role})
                 order by (a.user_id is not null) desc limit 1)`
          : sql`null::text`
      } as policy_id
    from databases d
    left join credentials c on ${
      q.credentialId
        ? sql`c.database_id = d.id and c.id = ${q.credentialId}`
        : q.forAi
          ? sql`c.id = (select c.id from credentials c where c.database_id = d.id
                order by (c.ai_allowed and ${usable}) desc, (c.default_credential and ${usable}) desc,
                  c.default_credential desc, c.created_at, c.id
                limit 1)`
          : sql`c.database_id = d.id and c.default_credential`
    }
    where d.id = ${q.databaseId} and d.org_id = ${q.orgId}`;
  if (!row) return null;
  const {
    cred_id,
    cred_database_id,
    cred_username,
    cred_password_enc,
    cred_hostname,
    cred_ai_allowed,
    cred_timeout,
    cred_reviews_required,
    cred_default_credential,
    cred_created_at,
    cred_updated_at,
    cred_restrict_access,
    cred_justification_required,
    cred_large_write_rows,
    cred_risk_reviews,
    cred_undo_max_rows,
    granted,
    credential_granted,
    policy_id,
    ...db
  } = row;
  const cred: CredentialRow | null =
    cred_id === null
      ? null
      : {
          id: cred_id,
          database_id: cred_database_id!,
          username: cred_username!,
          password_enc: cred_password_enc!,
          hostname: cred_hostname,
          ai_allowed: cred_ai_allowed!,
          timeout: cred_timeout,
          reviews_required: cred_reviews_required!,
          default_credential: cred_default_credential!,
          restrict_access: cred_restrict_access!,
          justification_required: cred_justification_required!,
          large_write_rows: cred_large_write_rows!,
          risk_reviews: cred_risk_reviews!,
          undo_max_rows: cred_undo_max_rows!,
          created_at: cred_created_at!,
          updated_at: cred_updated_at!,
        };
  return { db, cred, granted, credentialGranted: credential_granted, policyId: policy_id };
}

/** The credential's columns as the access query names them (null when no credential matched). */
type CredentialColumns = {
  [K in keyof CredentialRow as `cred_${K}`]: CredentialRow[K] | null;
};

/** Who may use a restrict_access credential: one user, or everyone with one role. */
export interface CredentialGrantRow {
  id: string;
  credential_id: string;
  user_id: string | null;
  role: string | null;
  granted_by: string | null;
  created_at: Date;
}

export async function insertCredentialGrant(
  sql: Tx,
  g: {
    id: string;
    credentialId: string;
    userId: string | null;
    role: string | null;
    grantedBy: string | null;
  },
): Promise<{ grant: CredentialGrantRow; created: boolean }> {
  const [inserted] = await sql<CredentialGrantRow[]>`
    insert into credential_grants (id, credential_id, user_id, role, granted_by)
    values (${g.id}, ${g.credentialId}, ${g.userId}, ${g.role}, ${g.grantedBy})
    on conflict do nothing
    returning *`;
  if (inserted) return { grant: inserted, created: true };
  const [existing] = await sql<CredentialGrantRow[]>`
    select * from credential_grants where credential_id = ${g.credentialId}
      and user_id is not distinct from ${g.userId} and role is not distinct from ${g.role}`;
  return { grant: existing!, created: false };
}

export async function listCredentialGrants(sql: Tx, credentialId: string): Promise<CredentialGrantRow[]> {
  return sql<CredentialGrantRow[]>`
    select * from credential_grants where credential_id = ${credentialId} order by id`;
}

export async function deleteCredentialGrant(
  sql: Tx,
  credentialId: string,
  grantId: string,
): Promise<CredentialGrantRow | null> {
  const [row] = await sql<CredentialGrantRow[]>`
    delete from credential_grants where credential_id = ${credentialId} and id = ${grantId} returning *`;
  return row ?? null;
}

/** Which of these credentials a user (with this role) may use: open ones and those granted. */
export async function usableCredentialIds(
  sql: Tx,
  credentialIds: string[],
  user: { userId: string; role: string },
): Promise<Set<string>> {
  if (credentialIds.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select c.id from credentials c
    where c.id in ${sql(credentialIds)}
      and (not c.restrict_access or exists (select 1 from credential_grants cg
           where cg.credential_id = c.id and (cg.user_id = ${user.userId} or cg.role = ${user.role})))`;
  return new Set(rows.map((r) => r.id));
}
