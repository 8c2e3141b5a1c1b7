// A person's own account, as the settings page and /api/v1/tokens show it: their personal
// tokens, their live sessions, ending them. Only the person themselves: the caller's actor names
// whose account it is, so no id from a form can reach someone else's.
import type { Caller } from '../audit/actors.ts';
import { forbidden } from '../core/errors.ts';
import type { Tx } from '../store/db.ts';
import { listPersonalTokens, type PersonalTokenRow } from '../store/personal-tokens.ts';
import {
  listLiveSessions,
  revokeOtherSessions,
  revokeUserSession,
  type SessionRow,
} from '../store/sessions.ts';
import { findUserById, type UserRow } from '../store/users.ts';

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
