import type { PersonActor } from '../audit/actors.ts';
import { recordEvent } from '../audit/events.ts';
import { forbidden, validationFailed } from '../core/errors.ts';
import type { Principal } from '../identity/principal.ts';
import type { Tx } from '../store/db.ts';
import { findUserByEmail, findUserById, type Role } from '../store/users.ts';

const RANK: Record<Role, number> = { member: 0, admin: 1, super_admin: 2 };

/**
 * Who a request is, resolved once (api/middleware/auth.ts). A person's credential, or an API key,
 * which is its owner (identity/authenticate.ts). With `x-act-as-user` a key acts for the person
 * named — only a key a super admin marked for it, and only for someone whose role does not exceed
 * the key owner's. The principal then becomes that person everywhere (their role, runs and
 * data-protection policy); the actor names the key and its owner beside them, the act is audited
 * with both identities, and such a request may never give a review (governance/requests.ts) or
 * bypass one (governance/review-rules.ts). A person's own token naming someone else would be a way
 * to borrow their access, so it is refused rather than ignored.
 */
export async function requestIdentity(
  sql: Tx,
  p: Principal,
  actAs: string | undefined,
  key: { actAsAllowed: boolean } | null,
  request: { method: string; path: string },
): Promise<{ principal: Principal; actor: PersonActor }> {
  if (actAs === undefined || actAs.trim() === '') {
    return {
      principal: p,
      actor: {
        kind: 'user',
        userId: p.userId,
        role: p.role,
        ...(p.via === 'api_key' ? { viaApiKeyId: p.credentialId } : {}),
        ...(p.serviceAccount ? { serviceAccount: true } : {}),
      },
    };
  }
  if (p.via !== 'api_key' || !key)
    throw validationFailed([{ path: 'x-act-as-user', message: 'only an API key may act for a user' }]);
  if (!key.actAsAllowed)
    throw forbidden('this API key may not act for a user: a super admin must mark it (act_as_allowed)');
  const value = actAs.trim();
  const user = value.startsWith('usr_')
    ? await findUserById(sql, value)
    : await findUserByEmail(sql, p.orgId, value);
  if (!user || user.org_id !== p.orgId || user.disabled_at || user.deleted_at || user.service_account)
    throw validationFailed([
      { path: 'x-act-as-user', message: 'names no active person of this organization' },
    ]);
  // A key never exceeds its owner, acting for someone included.
  if (RANK[user.role] > RANK[p.role])
    throw validationFailed([
      { path: 'x-act-as-user', message: "names a person whose role is above the key owner's" },
    ]);
  const actedBy = { apiKeyId: p.credentialId, ownerUserId: p.userId };
  const actor: PersonActor = {
    kind: 'user',
    userId: user.id,
    role: user.role,
    viaApiKeyId: p.credentialId,
    actingKeyOwnerId: p.userId,
  };
  await recordEvent(sql, {
    orgId: p.orgId,
    actor,
    origin: 'user',
    event: 'api_key.act_as',
    subject: { api_key_id: p.credentialId, key_owner_id: p.userId, user_id: user.id },
    outcome: 'allowed',
    detail: `${request.method} ${request.path}`,
  });
  return {
    principal: {
      kind: 'user',
      orgId: p.orgId,
      userId: user.id,
      email: user.email,
      role: user.role,
      via: 'api_key',
      credentialId: p.credentialId,
      actedBy,
    },
    actor,
  };
}
