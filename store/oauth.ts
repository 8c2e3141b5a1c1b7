import { cachedAccessRead } from './access-cache.ts';
import type { Tx } from './db.ts';
import type { Role } from './users.ts';

/**
 * An OAuth client: registered (RFC 7591, `kind` 'dcr', id `cli_…`) or known by its client ID
 * metadata document (`kind` 'cimd', id = the document's https URL). `secret_hash` is null for
 * public clients, which every 'cimd' client is.
 */
export interface OAuthClientRow {
  id: string;
  kind: 'dcr' | 'cimd';
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none' | 'client_secret_basic' | 'client_secret_post';
  scope: string;
  extra: Record<string, string>;
  secret_hash: string | null;
  secret_expires_at: Date | null;
  registered_from: string;
  /** 'cimd' only: when the document was last fetched and validated, and when that copy is stale. */
  metadata_fetched_at: Date | null;
  metadata_expires_at: Date | null;
  created_at: Date;
}

/** What registration writes; the 'cimd' columns are upsertMetadataClient's. */
export type NewClient = Omit<
  OAuthClientRow,
  'created_at' | 'kind' | 'metadata_fetched_at' | 'metadata_expires_at'
>;

export interface OAuthCodeRow {
  id: string;
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scope: string;
  resource: string;
  expires_at: Date;
  used_at: Date | null;
  grant_id: string | null;
  created_at: Date;
}

export interface OAuthGrantRow {
  id: string;
  client_id: string;
  user_id: string;
  scope: string;
  resource: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

export interface RefreshTokenRow {
  id: string;
  grant_id: string;
  token_hash: string;
  parent_id: string | null;
  expires_at: Date;
  rotated_at: Date | null;
  created_at: Date;
}

export async function insertClient(sql: Tx, row: NewClient): Promise<OAuthClientRow> {
  const [out] = await sql<OAuthClientRow[]>`
    insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types,
      token_endpoint_auth_method, scope, extra, secret_hash, secret_expires_at, registered_from)
    values (${row.id}, ${row.client_name}, ${row.redirect_uris}, ${row.grant_types}, ${row.response_types},
      ${row.token_endpoint_auth_method}, ${row.scope}, ${sql.json(row.extra)}, ${row.secret_hash},
      ${row.secret_expires_at}, ${row.registered_from})
    returning *`;
  return out!;
}

export async function findClient(sql: Tx, id: string): Promise<OAuthClientRow | null> {
  const [row] = await sql<OAuthClientRow[]>`select * from oauth_clients where id = ${id}`;
  return row ?? null;
}

/**
 * Stores a validated client ID metadata document as the client keyed by its URL, or refreshes
 * the stored copy. Never touches a registered ('dcr') row (their ids are `cli_…`, never URLs).
 */
export async function upsertMetadataClient(
  sql: Tx,
  row: Pick<
    OAuthClientRow,
    'id' | 'client_name' | 'redirect_uris' | 'grant_types' | 'response_types' | 'scope' | 'extra'
  > & { expiresAt: Date },
): Promise<OAuthClientRow | null> {
  const [out] = await sql<OAuthClientRow[]>`
    insert into oauth_clients (id, kind, client_name, redirect_uris, grant_types, response_types,
      token_endpoint_auth_method, scope, extra, secret_hash, secret_expires_at, registered_from,
      metadata_fetched_at, metadata_expires_at)
    values (${row.id}, 'cimd', ${row.client_name}, ${row.redirect_uris}, ${row.grant_types},
      ${row.response_types}, 'none', ${row.scope}, ${sql.json(row.extra)}, null, null, '',
      now(), ${row.expiresAt})
    on conflict (id) do update set client_name = excluded.client_name,
      redirect_uris = excluded.redirect_uris, grant_types = excluded.grant_types,
      response_types = excluded.response_types, scope = excluded.scope, extra = excluded.extra,
      metadata_fetched_at = excluded.metadata_fetched_at,
      metadata_expires_at = excluded.metadata_expires_at
    where oauth_clients.kind = 'cimd'
    returning *`;
  return out ?? null;
}

/**
 * Registrations from one address since a moment (rate limiting is kept in the store, not memory).
 * Metadata-document clients are not registrations and do not count.
 */
export async function countRegistrations(sql: Tx, from: string | null, since: Date): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from oauth_clients
    where kind = 'dcr' and created_at > ${since}
      ${from === null ? sql`` : sql`and registered_from = ${from}`}`;
  return row!.n;
}

export async function insertCode(
  sql: Tx,
  row: Omit<OAuthCodeRow, 'used_at' | 'grant_id' | 'created_at'>,
): Promise<void> {
  await sql`
    insert into oauth_codes (id, code_hash, client_id, user_id, redirect_uri, code_challenge, scope, resource, expires_at)
    values (${row.id}, ${row.code_hash}, ${row.client_id}, ${row.user_id}, ${row.redirect_uri},
      ${row.code_challenge}, ${row.scope}, ${row.resource}, ${row.expires_at})`;
}

export async function findCode(sql: Tx, id: string): Promise<OAuthCodeRow | null> {
  const [row] = await sql<OAuthCodeRow[]>`select * from oauth_codes where id = ${id}`;
  return row ?? null;
}

/** Marks a code used; null when it was already used (the caller treats that as a replay). */
export async function consumeCode(sql: Tx, id: string): Promise<OAuthCodeRow | null> {
  const [row] = await sql<OAuthCodeRow[]>`
    update oauth_codes set used_at = now() where id = ${id} and used_at is null returning *`;
  return row ?? null;
}

export async function setCodeGrant(sql: Tx, codeId: string, grantId: string): Promise<void> {
  await sql`update oauth_codes set grant_id = ${grantId} where id = ${codeId}`;
}

export async function insertGrant(
  sql: Tx,
  row: Pick<OAuthGrantRow, 'id' | 'client_id' | 'user_id' | 'scope' | 'resource'>,
): Promise<OAuthGrantRow> {
  const [out] = await sql<OAuthGrantRow[]>`
    insert into oauth_grants (id, client_id, user_id, scope, resource)
    values (${row.id}, ${row.client_id}, ${row.user_id}, ${row.scope}, ${row.resource})
    returning *`;
  return out!;
}

export async function findGrant(sql: Tx, id: string): Promise<OAuthGrantRow | null> {
  const [row] = await sql<OAuthGrantRow[]>`select * from oauth_grants where id = ${id}`;
  return row ?? null;
}

export async function revokeGrant(sql: Tx, id: string, reason: string): Promise<void> {
  await sql`
    update oauth_grants set revoked_at = now(), revoked_reason = ${reason}
    where id = ${id} and revoked_at is null`;
}

/** Revokes one of the user's own grants; false when it is not theirs or already revoked. */
export async function revokeUserGrant(sql: Tx, userId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update oauth_grants set revoked_at = now(), revoked_reason = 'revoked by the user'
    where id = ${id} and user_id = ${userId} and revoked_at is null
    returning id`;
  return rows.length > 0;
}

/** A grant with what authenticating an MCP request needs of its client and user, in one query. */
export interface GrantCallerRow {
  grant_id: string;
  user_id: string;
  client_id: string;
  client_name: string;
  revoked_at: Date | null;
  last_used_at: Date | null;
  org_id: string;
  email: string;
  role: Role;
  disabled_at: Date | null;
  /** The organization's limits on this client (ai_client_controls), read in the same statement. */
  client_disabled: boolean;
  client_database_ids: string[] | null;
}

export function findGrantCaller(sql: Tx, grantId: string): Promise<GrantCallerRow | null> {
  // Grants, clients, users and client controls notify store/access-cache.ts when they change
  // (a grant's last use excepted: that decides nothing).
  return cachedAccessRead(sql, `grant:${grantId}`, async () => {
    const [row] = await sql<GrantCallerRow[]>`
    select g.id as grant_id, g.user_id, g.client_id, c.client_name, g.revoked_at, g.last_used_at,
      u.org_id, u.email, u.role, u.disabled_at,
      coalesce(ctl.disabled, false) as client_disabled, ctl.database_ids as client_database_ids
    from oauth_grants g
      join oauth_clients c on c.id = g.client_id
      join users u on u.id = g.user_id
      left join ai_client_controls ctl on ctl.org_id = u.org_id and ctl.client_id = g.client_id
    where g.id = ${grantId}`;
    return row ?? null;
  });
}

/** Records use at most once a minute, so a busy client does not write on every request. */
export async function touchGrant(sql: Tx, id: string): Promise<void> {
  await sql`
    update oauth_grants set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
}

export interface ConnectedClient {
  grant_id: string;
  client_id: string;
  /** 'cimd': client_id is the metadata document's https URL, whose host vouches for it. */
  kind: 'dcr' | 'cimd';
  client_name: string;
  redirect_uris: string[];
  scope: string;
  created_at: Date;
  last_used_at: Date | null;
}

export async function listUserGrants(sql: Tx, userId: string): Promise<ConnectedClient[]> {
  return sql<ConnectedClient[]>`
    select g.id as grant_id, c.id as client_id, c.kind, c.client_name, c.redirect_uris, g.scope,
      g.created_at, g.last_used_at
    from oauth_grants g join oauth_clients c on c.id = g.client_id
    where g.user_id = ${userId} and g.revoked_at is null
    order by g.created_at desc`;
}

export async function insertRefreshToken(
  sql: Tx,
  row: Pick<RefreshTokenRow, 'id' | 'grant_id' | 'token_hash' | 'parent_id' | 'expires_at'>,
): Promise<void> {
  await sql`
    insert into oauth_refresh_tokens (id, grant_id, token_hash, parent_id, expires_at)
    values (${row.id}, ${row.grant_id}, ${row.token_hash}, ${row.parent_id}, ${row.expires_at})`;
}

export async function findRefreshToken(sql: Tx, id: string): Promise<RefreshTokenRow | null> {
  const [row] = await sql<RefreshTokenRow[]>`select * from oauth_refresh_tokens where id = ${id}`;
  return row ?? null;
}

/** Marks a token rotated; false when another request rotated it first. */
export async function markRotated(sql: Tx, id: string): Promise<boolean> {
  const rows = await sql`
    update oauth_refresh_tokens set rotated_at = now() where id = ${id} and rotated_at is null returning id`;
  return rows.length > 0;
}

/** Consent that still holds for this client at exactly this redirect URI. */
export async function findConsent(
  sql: Tx,
  userId: string,
  clientId: string,
  redirectUri: string,
): Promise<{ scope: string } | null> {
  const [row] = await sql<{ scope: string }[]>`
    select scope from oauth_consents
    where user_id = ${userId} and client_id = ${clientId} and redirect_uri = ${redirectUri}
      and expires_at > now()`;
  return row ?? null;
}

export async function saveConsent(
  sql: Tx,
  c: { userId: string; clientId: string; redirectUri: string; scope: string; expiresAt: Date },
): Promise<void> {
  await sql`
    insert into oauth_consents (user_id, client_id, redirect_uri, scope, expires_at)
    values (${c.userId}, ${c.clientId}, ${c.redirectUri}, ${c.scope}, ${c.expiresAt})
    on conflict (user_id, client_id, redirect_uri)
    do update set scope = excluded.scope, expires_at = excluded.expires_at, created_at = now()`;
}

/** Forgetting consent with the grant: a revoked client must ask again. */
export async function deleteConsent(sql: Tx, userId: string, clientId: string): Promise<void> {
  await sql`delete from oauth_consents where user_id = ${userId} and client_id = ${clientId}`;
}

/** Revokes every AI-client grant of a person, with the reason; their refresh tokens die with it. */
export async function revokeAllUserGrants(sql: Tx, userId: string, reason: string): Promise<number> {
  const rows = await sql`
    update oauth_grants set revoked_at = now(), revoked_reason = ${reason}
    where user_id = ${userId} and revoked_at is null returning id`;
  await sql`delete from oauth_consents where user_id = ${userId}`;
  return rows.length;
}
