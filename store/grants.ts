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
