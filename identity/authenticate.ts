import { cachedAccessRead } from '../store/access-cache.ts';
import { findApiKey, touchApiKey } from '../store/api-keys.ts';
import type { Tx } from '../store/db.ts';
import { findPersonalToken, touchPersonalToken } from '../store/personal-tokens.ts';
import { parseSecret, secretMatches } from '../store/secrets.ts';
import { findSession } from '../store/sessions.ts';
import { findUserById } from '../store/users.ts';
import type { UserPrincipal } from './principal.ts';
import { noteUse } from './usage.ts';

/**
 * Credential rows are read through the access cache (store/access-cache.ts), which their tables
 * notify (store/migrations/0034_credential_changes.sql); an id that matched nothing is not kept,
 * since anyone can send those.
 */
const found = (row: unknown) => row !== null;

/** Secret kinds: the first part of every bearer secret, so a key is never mistaken for a token. */
export const SECRET_KINDS = { apiKey: 'cskey', personalToken: 'cspat', session: 'csses' } as const;

/** An authenticated API key: the identity it carries, and whether it may act for someone. */
export interface ApiKeyIdentity {
  principal: UserPrincipal;
  actAsAllowed: boolean;
}

/**
 * Resolves an `x-api-key` value to its owner's identity: a key is its owner, never more (the
 * owner's role, grants and data-protection policy), and dies with the owner — a disabled or
 * deleted owner, or no owner at all, and the key no longer authenticates. Null for a malformed,
 * unknown, wrong, revoked or ownerless key: the caller answers all of these with the same 401 so
 * a probe learns nothing.
 */
export async function authenticateApiKey(sql: Tx, presented: string): Promise<ApiKeyIdentity | null> {
  const parsed = parseSecret(presented);
  if (!parsed || parsed.kind !== SECRET_KINDS.apiKey) return null;
  const id = `key_${parsed.ulid}`;
  const row = await cachedAccessRead(sql, `api_key:${id}`, () => findApiKey(sql, id), found);
  if (!row || row.revoked_at !== null || !secretMatches(presented, row.secret_hash)) return null;
  if (row.owner_user_id === null) return null;
  const principal = await activeUser(sql, row.owner_user_id, 'api_key', row.id);
  if (!principal || principal.orgId !== row.org_id) return null;
  noteUse(sql, 'api_key', row.id, row.last_used_at, touchApiKey);
  return { principal, actAsAllowed: row.act_as_allowed };
}

/** Resolves a personal access token (`Authorization: Bearer`); it acts as its user. */
export async function authenticatePersonalToken(sql: Tx, presented: string): Promise<UserPrincipal | null> {
  const parsed = parseSecret(presented);
  if (!parsed || parsed.kind !== SECRET_KINDS.personalToken) return null;
  const id = `pat_${parsed.ulid}`;
  const row = await cachedAccessRead(sql, `personal_token:${id}`, () => findPersonalToken(sql, id), found);
  if (!row || row.revoked_at !== null || !secretMatches(presented, row.secret_hash)) return null;
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) return null;
  const principal = await activeUser(sql, row.user_id, 'token', row.id);
  if (principal) noteUse(sql, 'personal_token', row.id, row.last_used_at, touchPersonalToken);
  return principal;
}

/** Resolves a session cookie value; the session's CSRF token comes back for form checks. */
export async function authenticateSession(
  sql: Tx,
  presented: string,
): Promise<{ principal: UserPrincipal; csrfToken: string } | null> {
  const parsed = parseSecret(presented);
  if (!parsed || parsed.kind !== SECRET_KINDS.session) return null;
  const id = `ses_${parsed.ulid}`;
  const row = await cachedAccessRead(sql, `session:${id}`, () => findSession(sql, id), found);
  if (!row || row.revoked_at !== null || !secretMatches(presented, row.secret_hash)) return null;
  if (row.expires_at.getTime() <= Date.now()) return null;
  const principal = await activeUser(sql, row.user_id, 'session', row.id);
  return principal ? { principal, csrfToken: row.csrf_token } : null;
}

/**
 * A disabled user's credentials stop working on their next request. A service account has no
 * credential but its API keys: any other kind naming it is refused.
 */
export async function activeUser(
  sql: Tx,
  userId: string,
  via: UserPrincipal['via'],
  credentialId: string,
): Promise<UserPrincipal | null> {
  const user = await cachedAccessRead(sql, `user:${userId}`, () => findUserById(sql, userId));
  if (!user || user.disabled_at !== null || user.deleted_at !== null) return null;
  if (user.service_account && via !== 'api_key') return null;
  return {
    kind: 'user',
    orgId: user.org_id,
    userId: user.id,
    email: user.email,
    role: user.role,
    via,
    credentialId,
    ...(user.service_account ? { serviceAccount: true } : {}),
  };
}
