import { randomBytes } from 'node:crypto';
import type { Caller } from '../audit/actors.ts';
import type { EventSubjects } from '../audit/event-types.ts';
import { inTransaction, recordEvent } from '../audit/events.ts';
import { type ApiKeyRow, insertApiKey, revokeApiKey } from '../store/api-keys.ts';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { insertPersonalToken, type PersonalTokenRow, revokePersonalToken } from '../store/personal-tokens.ts';
import { hashPassword, hashSecret, mintSecret, verifyPassword } from '../store/secrets.ts';
import { insertSession, revokeOtherSessions, revokeSession } from '../store/sessions.ts';
import {
  findUserById,
  findUsersByEmail,
  insertUser,
  type Role,
  setPasswordHash,
  type UserRow,
} from '../store/users.ts';
import { SECRET_KINDS } from './authenticate.ts';

/**
 * Creates an API key owned by `ownerUserId` (a person or service account, whose identity it
 * carries); the secret is in the result once and never again. Who may create which key is
 * decided by identity/api-keys.ts.
 */
export async function createApiKey(
  sql: Tx,
  input: {
    orgId: string;
    name: string;
    createdBy: string | null;
    ownerUserId: string;
    actAsAllowed?: boolean;
    secret?: string;
  },
): Promise<{ key: ApiKeyRow; secret: string }> {
  // A preset secret (COUNTERSIGN_API_KEY) is accepted as given; it is hashed like any other,
  // and its id is the one it carries so authentication finds it.
  const presetId = input.secret ? presetKeyId(input.secret) : null;
  if (input.secret && !presetId)
    throw new Error('a preset API key must have the shape cskey_<ULID>_<43 chars>');
  const id = presetId ?? newId('key');
  const minted = input.secret
    ? { secret: input.secret, hash: hashSecret(input.secret) }
    : mintSecret(SECRET_KINDS.apiKey, id);
  const key = await insertApiKey(sql, {
    id,
    orgId: input.orgId,
    name: input.name,
    secretHash: minted.hash,
    createdBy: input.createdBy,
    ownerUserId: input.ownerUserId,
    actAsAllowed: input.actAsAllowed ?? false,
  });
  return { key, secret: minted.secret };
}

/**
 * A preset key must have our shape so it can be found by id: `cskey_<ulid>_<43 base64url>`.
 * `countersign generate-api-key` prints one; deployments generate it once.
 */
function presetKeyId(secret: string): string | null {
  const m = /^cskey_([0-9A-HJKMNP-TV-Z]{26})_[A-Za-z0-9_-]{43}$/.exec(secret);
  return m ? `key_${m[1]}` : null;
}

export async function revokeOrgApiKey(
  sql: Tx,
  { orgId, actor, origin }: Caller,
  id: string,
): Promise<boolean> {
  return inTransaction(sql, async (tx) => {
    if (!(await revokeApiKey(tx, orgId, id))) return false;
    await recordEvent(tx, {
      orgId,
      actor,
      origin,
      event: 'api_key.revoked',
      subject: { api_key_id: id },
      outcome: 'allowed',
      detail: `revoked API key ${id}`,
    });
    return true;
  });
}

/** Creates a personal access token acting as `userId`. */
export async function createPersonalToken(
  sql: Tx,
  input: { userId: string; name: string; expiresAt: Date | null },
): Promise<{ token: PersonalTokenRow; secret: string }> {
  const id = newId('pat');
  const minted = mintSecret(SECRET_KINDS.personalToken, id);
  return inTransaction(sql, async (tx) => {
    const token = await insertPersonalToken(tx, {
      id,
      userId: input.userId,
      name: input.name,
      secretHash: minted.hash,
      expiresAt: input.expiresAt,
    });
    await auditToken(tx, input.userId, 'token.created', {
      token_id: id,
      user_id: input.userId,
      name: input.name,
      expires_at: input.expiresAt?.toISOString() ?? null,
    });
    return { token, secret: minted.secret };
  });
}

export async function revokeUserToken(sql: Tx, userId: string, id: string): Promise<boolean> {
  return inTransaction(sql, async (tx) => {
    if (!(await revokePersonalToken(tx, userId, id))) return false;
    await auditToken(tx, userId, 'token.revoked', { token_id: id, user_id: userId });
    return true;
  });
}

/** A personal token is made and revoked by the person it acts as: they are the actor. */
async function auditToken<K extends 'token.created' | 'token.revoked'>(
  tx: Tx,
  userId: string,
  event: K,
  subject: EventSubjects[K],
): Promise<void> {
  const user = await findUserById(tx, userId);
  if (!user) return;
  await recordEvent(tx, {
    orgId: user.org_id,
    actor: { kind: 'user', userId, role: user.role },
    origin: 'user',
    event,
    subject,
    outcome: 'allowed',
    detail: `${event === 'token.created' ? 'created' : 'revoked'} personal token ${subject.token_id}`,
  });
}

export async function createUser(
  sql: Tx,
  input: { orgId: string; email: string; name?: string; role: Role; password: string | null },
): Promise<UserRow> {
  return insertUser(sql, {
    id: newId('usr'),
    orgId: input.orgId,
    email: input.email,
    name: input.name ?? '',
    role: input.role,
    passwordHash: input.password === null ? null : await hashPassword(input.password),
  });
}

const SESSION_HOURS = 12;

/** Password sign-in. Null on any failure: unknown email and wrong password look alike. */
export async function signInWithPassword(
  sql: Tx,
  email: string,
  password: string,
  userAgent = '',
): Promise<{ cookie: string; csrfToken: string; user: UserRow } | null> {
  // An address is unique per organization, so it may name accounts in several: the password
  // picks the account (the oldest whose password it is). Hash even when no account has a
  // password, so timing does not reveal which emails exist.
  const candidates = (await findUsersByEmail(sql, email)).filter(
    (u) => u.password_hash !== null && u.disabled_at === null,
  );
  let user: UserRow | null = null;
  for (const u of candidates) {
    if (await verifyPassword(password, u.password_hash!)) {
      user = u;
      break;
    }
  }
  if (candidates.length === 0) await verifyPassword(password, DUMMY_HASH);
  if (!user) return null;
  const session = await startSession(sql, user.id, userAgent);
  return { ...session, user };
}

/** Opens a web session for a user already authenticated (password or SSO). */
export async function startSession(
  sql: Tx,
  userId: string,
  userAgent = '',
): Promise<{ cookie: string; csrfToken: string }> {
  const id = newId('ses');
  const minted = mintSecret(SECRET_KINDS.session, id);
  const csrfToken = randomBytes(24).toString('base64url');
  await insertSession(sql, {
    id,
    userId,
    secretHash: minted.hash,
    csrfToken,
    userAgent: userAgent.slice(0, 300),
    expiresAt: new Date(Date.now() + SESSION_HOURS * 3600_000),
  });
  return { cookie: minted.secret, csrfToken };
}

export async function endSession(sql: Tx, sessionId: string): Promise<void> {
  await revokeSession(sql, sessionId);
}

/** Shortest password a person may choose (NIST SP 800-63B §5.1.1.2 asks for at least 8). */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * A person changes their own password, proving the current one. Every other session ends: a
 * password change is what someone does when they fear another party has it.
 */
export async function changePassword(
  sql: Tx,
  input: { userId: string; current: string; next: string; keepSessionId: string | null },
): Promise<'changed' | 'wrong_current' | 'too_short'> {
  const user = await findUserById(sql, input.userId);
  if (!user?.password_hash || !(await verifyPassword(input.current, user.password_hash)))
    return 'wrong_current';
  if (input.next.length < MIN_PASSWORD_LENGTH) return 'too_short';
  const hash = await hashPassword(input.next);
  // The change, the sessions it ends and its audit event commit together.
  return inTransaction(sql, async (tx) => {
    await setPasswordHash(tx, user.id, hash);
    const ended = await revokeOtherSessions(tx, user.id, input.keepSessionId);
    await recordEvent(tx, {
      orgId: user.org_id,
      actor: { kind: 'user', userId: user.id, role: user.role },
      origin: 'user',
      event: 'user.password_changed',
      subject: { user_id: user.id, sessions_ended: ended },
      outcome: 'allowed',
      detail: `${user.email} changed their password; ${ended} other session(s) ended`,
    });
    return 'changed' as const;
  });
}

// scrypt of a random password: verifying against it always fails, at the real cost.
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
