// A person's own account, as the settings page and /api/v1/tokens show it: their personal
// tokens, their live sessions, ending them. Only the person themselves: the caller's actor names
// whose account it is, so no id from a form can reach someone else's.
import * as v from 'valibot';
import type { Caller } from '../audit/actors.ts';
import { forbidden } from '../core/errors.ts';
import { parseInput } from '../core/input.ts';
import type { Tx } from '../store/db.ts';
import { listPersonalTokens, type PersonalTokenRow } from '../store/personal-tokens.ts';
import {
  listLiveSessions,
  revokeOtherSessions,
  revokeUserSession,
  type SessionRow,
} from '../store/sessions.ts';
import { findUserById, type UserRow } from '../store/users.ts';
import { createPersonalToken } from './manage.ts';

function ownUserId(caller: Caller): string {
  if (caller.actor.kind !== 'user') throw forbidden('only a person has an account');
  return caller.actor.userId;
}

export async function myAccount(sql: Tx, caller: Caller): Promise<UserRow | null> {
  return findUserById(sql, ownUserId(caller));
}

export async function myTokens(sql: Tx, caller: Caller): Promise<PersonalTokenRow[]> {
  return listPersonalTokens(sql, ownUserId(caller));
}

export async function mySessions(sql: Tx, caller: Caller): Promise<SessionRow[]> {
  return listLiveSessions(sql, ownUserId(caller));
}

/** Ends one of the caller's own sessions; false when it is not theirs or already ended. */
export async function endMySession(sql: Tx, caller: Caller, sessionId: string): Promise<boolean> {
  return revokeUserSession(sql, ownUserId(caller), sessionId);
}

/** Ends every session of the caller's but `keep` (the one the request came with, if any). */
export async function endMyOtherSessions(sql: Tx, caller: Caller, keep: string | null): Promise<number> {
  return revokeOtherSessions(sql, ownUserId(caller), keep);
}

const DAYS = 'must be a whole number of days between 1 and 3650';

/**
 * A new personal access token, as POST /api/v1/tokens and the settings page's form both send it
 * (a form's empty expiry is null: no expiry). Checked here, by issueMyToken, for both doors.
 */
export const TokenInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'name is required'), v.maxLength(200)),
  expires_in_days: v.optional(
    v.nullable(v.pipe(v.number(DAYS), v.integer(DAYS), v.minValue(1, DAYS), v.maxValue(3650, DAYS))),
    null,
  ),
});
export type TokenBody = v.InferInput<typeof TokenInput>;

/** Issues a personal access token for the caller; the secret is returned once (SPEC.md 5.2). */
export async function issueMyToken(
  sql: Tx,
  caller: Caller,
  body: TokenBody,
): Promise<{ token: PersonalTokenRow; secret: string }> {
  const userId = ownUserId(caller);
  const input = parseInput(TokenInput, body);
  const expiresAt = input.expires_in_days ? new Date(Date.now() + input.expires_in_days * 86_400_000) : null;
  return createPersonalToken(sql, { userId, name: input.name, expiresAt });
}
