// Who may change the organization's single sign-on. Its provider decides who signs in as whom,
// so an admin who could point it at a provider they run could sign in as anyone. Changing it is
// a super admin's act, done as themselves — never through an API key, even one acting for them —
// and confirmed by entering their password again at that moment (re-authentication before a
// sensitive change, NIST SP 800-63B §4.2.3 / OWASP ASVS 4.0 V3.7.1). A wrong password here is
// a guess like one at sign-in, so it counts in the sign-in limits of the account at that address.

import { recordEvent } from '../audit/events.ts';
import { forbidden, tooManyRequests, validationFailed } from '../core/errors.ts';
import type { Sql, Tx } from '../store/db.ts';
import { verifyPassword } from '../store/secrets.ts';
import { findUserById } from '../store/users.ts';
import type { Principal } from './principal.ts';
import { accountKey, buckets, recordFailure, retryAfter, type ThrottleLimits } from './throttle.ts';

/** The request that asks for the change: who, and the password they entered again. */
export interface SsoChanger {
  principal: Principal;
  currentPassword: string | undefined;
  /** The sign-in limits and the client address the request came from. */
  throttle: { limits: ThrottleLimits; address: string };
}

/** The super admin's user id when the change may go ahead; a problem naming the field otherwise. */
export async function requireSsoAuthority(sql: Sql, who: SsoChanger): Promise<{ userId: string }> {
  const p = who.principal;
  if (p.kind !== 'user' || p.via === 'api_key' || p.via === 'oauth' || p.role !== 'super_admin')
    throw forbidden(
      'only a super admin, signed in as themselves (not through an API key), can change single sign-on',
    );
  const user = await findUserById(sql, p.userId);
  if (!user?.password_hash)
    throw validationFailed([
      { path: 'current_password', message: 'set a password for your account first; SSO changes need it' },
    ]);
  if (!who.currentPassword)
    throw validationFailed([
      { path: 'current_password', message: 'enter your password again to change single sign-on' },
    ]);
  const { limits, address } = who.throttle;
  const key = await accountKey(sql, user.email);
  const limited = [buckets.accountAtAddress(limits, key, address), buckets.address(limits, address)];
  const wait = await retryAfter(sql, limits, limited);
  if (wait !== null) throw tooManyRequests(`too many wrong passwords; try again in ${wait} seconds`);
  if (!(await verifyPassword(who.currentPassword, user.password_hash))) {
    await recordFailure(sql, limits, limited);
    throw validationFailed([{ path: 'current_password', message: 'is not your current password' }]);
  }
  return { userId: user.id };
}

/** The change in the organization's audit chain (never the client secret). */
export async function auditSsoChange(
  sql: Tx,
  orgId: string,
  userId: string,
  event: 'sso.updated' | 'sso.deleted',
  subject: Record<string, unknown>,
): Promise<void> {
  await recordEvent(sql, {
    orgId,
    actor: { kind: 'user', userId, role: 'super_admin' },
    origin: 'user',
    event,
    subject,
    outcome: 'allowed',
    detail:
      event === 'sso.updated' ? `single sign-on set to ${String(subject.issuer)}` : 'single sign-on removed',
  });
}
