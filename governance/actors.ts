import { validationFailed } from '../core/errors.ts';
import type { Principal } from '../identity/principal.ts';
import type { Tx } from '../store/db.ts';
import { findUserByEmail, findUserById } from '../store/users.ts';
import type { QueryActor } from './types.ts';

/**
 * Who a request is, resolved once (api/middleware/auth.ts): the person, the organization's API key,
 * or — with `x-act-as-user` — the person a key acts for. Acting for a person narrows the key to that
 * person everywhere: the principal itself becomes the person (their role, their runs, their
 * data-protection policy), and the governance actor names the key beside them for the audit.
 * Only an organization key may act for someone: a person's own token naming another person would
 * be a way to borrow their access, so it is refused rather than ignored.
 */
export async function requestIdentity(
  sql: Tx,
  p: Principal,
  actAs: string | undefined,
): Promise<{ principal: Principal; actor: QueryActor }> {
  if (actAs === undefined || actAs.trim() === '') {
    return {
      principal: p,
      actor:
        p.kind === 'api_key'
          ? { kind: 'api_key', apiKeyId: p.apiKeyId }
          : { kind: 'user', userId: p.userId, role: p.role },
    };
  }
  if (p.kind !== 'api_key')
    throw validationFailed([
      { path: 'x-act-as-user', message: 'only an organization API key may act for a user' },
    ]);
  const value = actAs.trim();
  const user = value.startsWith('usr_')
    ? await findUserById(sql, value)
    : await findUserByEmail(sql, p.orgId, value);
  if (!user || user.org_id !== p.orgId || user.disabled_at)
    throw validationFailed([{ path: 'x-act-as-user', message: 'names no active user of this organization' }]);
  return {
    principal: {
      kind: 'user',
      orgId: p.orgId,
      userId: user.id,
      email: user.email,
      role: user.role,
      via: 'api_key',
      credentialId: p.apiKeyId,
    },
    actor: { kind: 'user', userId: user.id, role: user.role, viaApiKeyId: p.apiKeyId },
  };
}
