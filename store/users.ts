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

export async function findUserById(sql: Tx, id: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from users where id = ${id}`;
  return row ?? null;
}

export async function findUserByEmail(sql: Tx, email: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from users where lower(email) = lower(${email})`;
  return row ?? null;
}

export async function listUsers(sql: Tx, orgId: string): Promise<UserRow[]> {
  return sql<UserRow[]>`select * from users where org_id = ${orgId} order by id`;
}

export async function setUserDisabled(sql: Tx, id: string, disabled: boolean): Promise<void> {
  await sql`update users set disabled_at = ${disabled ? sql`now()` : null}, updated_at = now() where id = ${id}`;
}

export async function setPasswordHash(sql: Tx, id: string, passwordHash: string): Promise<void> {
  await sql`update users set password_hash = ${passwordHash}, updated_at = now() where id = ${id}`;
}
