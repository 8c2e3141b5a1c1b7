import { validationFailed } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { findUserByEmail, findUserById } from '../store/users.ts';
import type { QueryActor } from './query.ts';

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
