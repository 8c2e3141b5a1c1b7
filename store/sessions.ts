import type { Tx } from './db.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  secret_hash: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function insertSession(
  sql: Tx,
  s: { id: string; userId: string; secretHash: string; csrfToken: string; expiresAt: Date },
): Promise<SessionRow> {
  const [row] = await sql<SessionRow[]>`
    insert into sessions (id, user_id, secret_hash, csrf_token, expires_at)
    values (${s.id}, ${s.userId}, ${s.secretHash}, ${s.csrfToken}, ${s.expiresAt})
    returning *`;
  return row!;
}

export async function findSession(sql: Tx, id: string): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`select * from sessions where id = ${id}`;
  return row ?? null;
}

export async function revokeSession(sql: Tx, id: string): Promise<void> {
  await sql`update sessions set revoked_at = now() where id = ${id} and revoked_at is null`;
}
