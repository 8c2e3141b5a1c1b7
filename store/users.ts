import type { Tx } from './db.ts';

export type Role = 'super_admin' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['super_admin', 'admin', 'member'];

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: Date;
}

export interface UserRow {
  id: string;
  org_id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string | null;
  disabled_at: Date | null;
  /** Deleted people keep their row for the history that names them; they never sign in again. */
  deleted_at: Date | null;
  /** A service account: owns API keys, never signs in, never super admin. */
  service_account: boolean;
  created_at: Date;
  updated_at: Date;
}

export async function insertOrganization(
  sql: Tx,
  org: { id: string; name: string },
): Promise<OrganizationRow> {
  const [row] = await sql<OrganizationRow[]>`
    insert into organizations (id, name) values (${org.id}, ${org.name})
    returning id, name, created_at`;
  return row!;
}

export async function countOrganizations(sql: Tx): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from organizations`;
  return row!.n;
}

export async function firstOrganization(sql: Tx): Promise<OrganizationRow | null> {
  const [row] = await sql<
    OrganizationRow[]
  >`select id, name, created_at from organizations order by id limit 1`;
  return row ?? null;
}

export async function insertUser(
  sql: Tx,
  user: { id: string; orgId: string; email: string; name: string; role: Role; passwordHash: string | null },
): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    insert into users (id, org_id, email, name, role, password_hash)
    values (${user.id}, ${user.orgId}, ${user.email}, ${user.name}, ${user.role}, ${user.passwordHash})
    returning *`;
  return row!;
}

/** A service account: a user row without password whose only credentials are its API keys. */
export async function insertServiceAccount(
  sql: Tx,
  account: { id: string; orgId: string; name: string; role: 'admin' | 'member' },
): Promise<UserRow> {
  // The e-mail column is required and unique; `.invalid` (RFC 2606) can never be a mailbox.
  const [row] = await sql<UserRow[]>`
    insert into users (id, org_id, email, name, role, password_hash, service_account)
    values (${account.id}, ${account.orgId}, ${`${account.id}@service-account.invalid`}, ${account.name},
      ${account.role}, null, true)
    returning *`;
  return row!;
}

export async function findUserById(sql: Tx, id: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from users where id = ${id}`;
  return row ?? null;
}

/** The person of one organization with this address (an address is unique per organization). */
export async function findUserByEmail(sql: Tx, orgId: string, email: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`
    select * from users
    where org_id = ${orgId} and lower(email) = lower(${email}) and deleted_at is null`;
  return row ?? null;
}

/** Every account with this address, one per organization at most, oldest first (sign-in). */
export async function findUsersByEmail(sql: Tx, email: string): Promise<UserRow[]> {
  return sql<UserRow[]>`
    select * from users where lower(email) = lower(${email}) and deleted_at is null
    order by created_at, id limit 20`;
}

export async function listUsers(sql: Tx, orgId: string): Promise<UserRow[]> {
  return sql<UserRow[]>`select * from users where org_id = ${orgId} and deleted_at is null order by id`;
}

export async function setUserDisabled(sql: Tx, id: string, disabled: boolean): Promise<void> {
  await sql`update users set disabled_at = ${disabled ? sql`now()` : null}, updated_at = now() where id = ${id}`;
}

export async function setPasswordHash(sql: Tx, id: string, passwordHash: string): Promise<void> {
  await sql`update users set password_hash = ${passwordHash}, updated_at = now() where id = ${id}`;
}

export async function updateUser(
  sql: Tx,
  id: string,
  fields: Partial<Pick<UserRow, 'name' | 'role'>>,
): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    update users set
      name = coalesce(${fields.name ?? null}, name),
      role = coalesce(${fields.role ?? null}, role),
      updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

export async function markUserDeleted(sql: Tx, id: string): Promise<void> {
  await sql`
    update users set deleted_at = now(), disabled_at = coalesce(disabled_at, now()), password_hash = null,
      updated_at = now()
    where id = ${id}`;
}

/** Super admins of the organization who can still sign in, locking their rows (no race to zero). */
export async function lockActiveSuperAdmins(sql: Tx, orgId: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from users
    where org_id = ${orgId} and role = 'super_admin' and disabled_at is null and deleted_at is null
    order by id for update`;
  return rows.map((r) => r.id);
}

export interface PasswordSetupRow {
  id: string;
  user_id: string;
  secret_hash: string;
  created_by: string | null;
  /** The organization API key the link was issued through, if any. */
  created_by_key: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertPasswordSetup(
  sql: Tx,
  p: {
    id: string;
    userId: string;
    secretHash: string;
    createdBy: string | null;
    createdByKey: string | null;
    expiresAt: Date;
  },
): Promise<void> {
  // A new link replaces any earlier one that was not used.
  await sql`update password_setups set used_at = now() where user_id = ${p.userId} and used_at is null`;
  await sql`
    insert into password_setups (id, user_id, secret_hash, created_by, created_by_key, expires_at)
    values (${p.id}, ${p.userId}, ${p.secretHash}, ${p.createdBy}, ${p.createdByKey}, ${p.expiresAt})`;
}

export async function findPasswordSetup(sql: Tx, id: string): Promise<PasswordSetupRow | null> {
  const [row] = await sql<PasswordSetupRow[]>`select * from password_setups where id = ${id} for update`;
  return row ?? null;
}

export async function usePasswordSetup(sql: Tx, id: string): Promise<boolean> {
  const rows =
    await sql`update password_setups set used_at = now() where id = ${id} and used_at is null returning id`;
  return rows.length > 0;
}

/** Spends the unused links for a person and those the person issued; how many. */
export async function spendPasswordSetups(sql: Tx, userId: string): Promise<number> {
  const rows = await sql`
    update password_setups set used_at = now()
    where used_at is null and (user_id = ${userId} or created_by = ${userId}) returning id`;
  return rows.length;
}
