import { validationFailed } from '../core/errors.ts';
import type { Principal } from '../identity/principal.ts';
import type { Tx } from '../store/db.ts';
import { findUserByEmail, findUserById } from '../store/users.ts';
import type { QueryActor } from './types.ts';

/**
 * The user an organization API key acts for (header `x-act-as-user`: a user id or an email).
 * The key already has the organization's authority; acting for a user narrows it to that
 * user's access, and the audit log names both.
 */
export async function actingUser(sql: Tx, orgId: string, apiKeyId: string, who: string): Promise<QueryActor> {
  const value = who.trim();
  const user = value.startsWith('usr_') ? await findUserById(sql, value) : await findUserByEmail(sql, value);
  if (!user || user.org_id !== orgId || user.disabled_at)
    throw validationFailed([{ path: 'x-act-as-user', message: 'names no active user of this organization' }]);
  return { kind: 'user', userId: user.id, role: user.role, viaApiKeyId: apiKeyId };
}

/**
 * The governance actor of an authenticated request, resolved once (api/middleware/auth.ts): the
 * person, the organization's API key, or — with `x-act-as-user` — the person a key acts for.
 * Only an organization key may act for someone: a person's own token naming another person
 * would be a way to borrow their access, so it is refused rather than ignored.
 */
export async function requestActor(sql: Tx, p: Principal, actAs: string | undefined): Promise<QueryActor> {
  if (actAs !== undefined && actAs.trim() !== '') {
    if (p.kind !== 'api_key')
      throw validationFailed([
        { path: 'x-act-as-user', message: 'only an organization API key may act for a user' },
      ]);
    return actingUser(sql, p.orgId, p.apiKeyId, actAs);
  }
  return p.kind === 'api_key'
    ? { kind: 'api_key', apiKeyId: p.apiKeyId }
    : { kind: 'user', userId: p.userId, role: p.role };
}
