import type { Tx } from './db.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  secret_hash: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  user_agent: string;
}

export async function insertSession(
  sql: Tx,
  s: {
    id: string;
    userId: string;
    secretHash: string;
    csrfToken: string;
    expiresAt: Date;
    userAgent?: string;
  },
): Promise<SessionRow> {
  const [row] = await sql<SessionRow[]>`
    insert into sessions (id, user_id, secret_hash, csrf_token, expires_at, user_agent)
    values (${s.id}, ${s.userId}, ${s.secretHash}, ${s.csrfToken}, ${s.expiresAt}, ${s.userAgent ?? ''})
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

/** A person's sessions that still work, newest first (Settings lists them to end any). */
export async function listLiveSessions(sql: Tx, userId: string): Promise<SessionRow[]> {
  return sql<SessionRow[]>`
    select * from sessions
    where user_id = ${userId} and revoked_at is null and expires_at > now()
    order by created_at desc`;
}

/** Ends a person's own session; false when it is not theirs or already ended. */
export async function revokeUserSession(sql: Tx, userId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update sessions set revoked_at = now()
    where id = ${id} and user_id = ${userId} and revoked_at is null returning id`;
  return rows.length > 0;
}

/** Ends every session of a person except `keep` (a password change; an admin disabling them). */
export async function revokeOtherSessions(sql: Tx, userId: string, keep: string | null): Promise<number> {
  const rows = await sql`
    update sessions set revoked_at = now()
    where user_id = ${userId} and revoked_at is null and (${keep}::text is null or id <> ${keep})
    returning id`;
  return rows.length;
}
