// The e-mails people receive about their account, and the reset a person asks for themself on
// the sign-in page. The links are the same one-time links an admin can issue (people.ts).
import { createHash } from 'node:crypto';
import { recordEvent } from '../audit/events.ts';
import type { Logger } from '../core/logger.ts';
import type { Mailer, MailMessage } from '../integrations/mail.ts';
import type { Sql } from '../store/db.ts';
import { findUsersByEmail } from '../store/users.ts';
import { newSetupLink, type SetupLink } from './people.ts';
import { type Bucket, recordFailure, retryAfter, type ThrottleLimits } from './throttle.ts';

/** A link asked for on the sign-in page lives an hour: it travels by e-mail, an admin's by hand. */
export const RESET_LINK_MINUTES = 60;
/** Reset requests one address may make per rate-limit window, and per account from one address. */
export const RESETS_PER_ADDRESS = 10;
export const RESETS_PER_ACCOUNT_AND_ADDRESS = 3;

const until = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function invitationMessage(to: string, link: SetupLink, invitedBy: string): MailMessage {
  return {
    to,
    subject: 'You are invited to Countersign',
    text: [
      `${invitedBy} invited you to Countersign.`,
      '',
      `Choose your password with this link. It works once, until ${until(link.expiresAt)}:`,
      '',
      link.url,
    ].join('\n'),
  };
}

export function resetMessage(to: string, link: SetupLink): MailMessage {
  return {
    to,
    subject: 'Reset your Countersign password',
    text: [
      'Someone asked to reset the password of this Countersign account.',
      `Choose a new password with this link. It works once, until ${until(link.expiresAt)}:`,
      '',
      link.url,
      '',
      'If it was not you, ignore this message: your password stays as it is.',
    ].join('\n'),
  };
}

/** Bucket names hold digests, never an address in clear (as identity/throttle.ts). */
const digest = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 32);

/** Buckets of the reset form: keyed by the client address, so strangers never block someone else. */
function resetBuckets(email: string, address: string): Bucket[] {
  return [
    { name: `reset-address:${digest(address)}`, limit: RESETS_PER_ADDRESS, kind: 'limit' },
    {
      name: `reset-account-address:${digest(email.toLowerCase(), address)}`,
      limit: RESETS_PER_ACCOUNT_AND_ADDRESS,
      kind: 'limit',
    },
  ];
}

/**
 * The sign-in page's "forgot password": every request counts against the limits, and the answer
 * is the same whether or not the address has an account (no account enumeration, OWASP
 * Forgot Password Cheat Sheet); the mail goes out after the answer, so its time says nothing
 * either. Returns the seconds to wait when a limit is reached, else null.
 */
export async function requestPasswordReset(
  deps: { sql: Sql; mailer: Mailer; logger: Logger; baseUrl: string; limits: ThrottleLimits },
  email: string,
  address: string,
): Promise<number | null> {
  const list = resetBuckets(email, address);
  const wait = await retryAfter(deps.sql, deps.limits, list);
  if (wait !== null) return wait;
  await recordFailure(deps.sql, deps.limits, list);
  void sendReset(deps, email).catch((err: unknown) =>
    deps.logger.warn({ err: { message: (err as Error).message } }, 'password reset mail failed'),
  );
  return null;
}

async function sendReset(deps: { sql: Sql; mailer: Mailer; baseUrl: string }, email: string): Promise<void> {
  const people = (await findUsersByEmail(deps.sql, email)).filter(
    (u) => u.disabled_at === null && u.deleted_at === null && !u.service_account,
  );
  for (const user of people) {
    const link = await deps.sql.begin(async (tx) => {
      const made = await newSetupLink(tx, deps.baseUrl, null, user.id, RESET_LINK_MINUTES * 60_000);
      await recordEvent(tx, {
        orgId: user.org_id,
        actor: { kind: 'user', userId: user.id, role: user.role },
        origin: 'user',
        event: 'user.password_reset_requested',
        subject: { user_id: user.id, expires_at: made.expiresAt.toISOString(), channel: 'email' },
        outcome: 'allowed',
        detail: `${user.email} asked for a password reset link by e-mail`,
      });
      return made;
    });
    await deps.mailer.send(resetMessage(user.email, link));
  }
}
