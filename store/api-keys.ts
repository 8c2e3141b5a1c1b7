import type { Tx } from './db.ts';

export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  secret_hash: string;
  created_by: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function insertApiKey(
  sql: Tx,
  key: { id: string; orgId: string; name: string; secretHash: string; createdBy: string | null },
): Promise<ApiKeyRow> {
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys (id, org_id, name, secret_hash, created_by)
    values (${key.id}, ${key.orgId}, ${key.name}, ${key.secretHash}, ${key.createdBy})
    returning *`;
  return row!;
}

export async function findApiKey(sql: Tx, id: string): Promise<ApiKeyRow | null> {
  const [row] = await sql<ApiKeyRow[]>`select * from api_keys where id = ${id}`;
  return row ?? null;
}

export async function listApiKeys(sql: Tx, orgId: string): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`select * from api_keys where org_id = ${orgId} order by id`;
}

/** Revokes a key of the organization; false when there is no such live key. */
export async function revokeApiKey(sql: Tx, orgId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update api_keys set revoked_at = now() where id = ${id} and org_id = ${orgId} and revoked_at is null
    returning id`;
  return rows.length === 1;
}

/** Best effort: usage stamps are for people, not for security decisions. */
export async function touchApiKey(sql: Tx, id: string): Promise<void> {
  await sql`update api_keys set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}
