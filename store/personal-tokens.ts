import type { Tx } from './db.ts';

export interface PersonalTokenRow {
  id: string;
  user_id: string;
  name: string;
  secret_hash: string;
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function insertPersonalToken(
  sql: Tx,
  token: { id: string; userId: string; name: string; secretHash: string; expiresAt: Date | null },
): Promise<PersonalTokenRow> {
  const [row] = await sql<PersonalTokenRow[]>`
    insert into personal_tokens (id, user_id, name, secret_hash, expires_at)
    values (${token.id}, ${token.userId}, ${token.name}, ${token.secretHash}, ${token.expiresAt})
    returning *`;
  return row!;
}

export async function findPersonalToken(sql: Tx, id: string): Promise<PersonalTokenRow | null> {
  const [row] = await sql<PersonalTokenRow[]>`select * from personal_tokens where id = ${id}`;
  return row ?? null;
}

export async function listPersonalTokens(sql: Tx, userId: string): Promise<PersonalTokenRow[]> {
  return sql<PersonalTokenRow[]>`select * from personal_tokens where user_id = ${userId} order by id`;
}

/** Revokes one of the user's tokens; false when there is no such live token. */
export async function revokePersonalToken(sql: Tx, userId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update personal_tokens set revoked_at = now()
    where id = ${id} and user_id = ${userId} and revoked_at is null returning id`;
  return rows.length === 1;
}

export async function touchPersonalToken(sql: Tx, id: string): Promise<void> {
  await sql`update personal_tokens set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}

/** Revokes every token of a person (they were disabled or deleted). */
export async function revokeAllPersonalTokens(sql: Tx, userId: string): Promise<number> {
  const rows = await sql`
    update personal_tokens set revoked_at = now() where user_id = ${userId} and revoked_at is null returning id`;
  return rows.length;
}
