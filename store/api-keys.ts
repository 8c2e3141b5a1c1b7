import type { Tx } from './db.ts';
import type { Role } from './users.ts';

export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  secret_hash: string;
  created_by: string | null;
  /** The person or service account whose identity the key carries; null only on revoked keys. */
  owner_user_id: string | null;
  /** Set by a super admin person: the key may send x-act-as-user. */
  act_as_allowed: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A key with what a listing shows of its owner. */
export interface ApiKeyListing extends ApiKeyRow {
  owner_email: string | null;
  owner_name: string | null;
  owner_role: Role | null;
  owner_service_account: boolean | null;
  owner_disabled: boolean | null;
}

export async function insertApiKey(
  sql: Tx,
  key: {
    id: string;
    orgId: string;
    name: string;
    secretHash: string;
    createdBy: string | null;
    ownerUserId: string;
    actAsAllowed: boolean;
  },
): Promise<ApiKeyRow> {
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys (id, org_id, name, secret_hash, created_by, owner_user_id, act_as_allowed)
    values (${key.id}, ${key.orgId}, ${key.name}, ${key.secretHash}, ${key.createdBy}, ${key.ownerUserId},
      ${key.actAsAllowed})
    returning *`;
  return row!;
}

export async function findApiKey(sql: Tx, id: string): Promise<ApiKeyRow | null> {
  const [row] = await sql<ApiKeyRow[]>`select * from api_keys where id = ${id}`;
  return row ?? null;
}

export async function listApiKeys(sql: Tx, orgId: string): Promise<ApiKeyListing[]> {
  return sql<ApiKeyListing[]>`
    select k.*, u.email as owner_email, u.name as owner_name, u.role as owner_role,
      u.service_account as owner_service_account,
      (u.disabled_at is not null or u.deleted_at is not null) as owner_disabled
    from api_keys k left join users u on u.id = k.owner_user_id
    where k.org_id = ${orgId} order by k.id`;
}

/** Revokes a key of the organization; false when there is no such live key. */
export async function revokeApiKey(sql: Tx, orgId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update api_keys set revoked_at = now() where id = ${id} and org_id = ${orgId} and revoked_at is null
    returning id`;
  return rows.length === 1;
}

/** Revokes every live key the user owns; how many. */
export async function revokeOwnedApiKeys(sql: Tx, ownerUserId: string): Promise<number> {
  const rows = await sql`
    update api_keys set revoked_at = now() where owner_user_id = ${ownerUserId} and revoked_at is null
    returning id`;
  return rows.length;
}

/** Marks a live key of the organization for x-act-as-user (or clears it); false when there is none. */
export async function setApiKeyActAs(sql: Tx, orgId: string, id: string, allowed: boolean): Promise<boolean> {
  const rows = await sql`
    update api_keys set act_as_allowed = ${allowed}
    where id = ${id} and org_id = ${orgId} and revoked_at is null
    returning id`;
  return rows.length === 1;
}

/** Best effort: usage stamps are for people, not for security decisions. */
export async function touchApiKey(sql: Tx, id: string): Promise<void> {
  await sql`update api_keys set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}
