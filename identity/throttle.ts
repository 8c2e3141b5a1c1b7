// Rate limits on guessing: sign-in and the token endpoint count failures in the store, so every
// API replica shares the counts. A bucket at its limit answers 429 with Retry-After (RFC 6585
// §4). No bucket that strangers can fill shuts out someone else: a hard limit is always keyed by
// the client address (alone, or with the account or OAuth client it names), and the one count
// every address feeds — an account's failures — only spaces attempts out, it never locks.
import { createHash } from 'node:crypto';
import type { Tx } from '../store/db.ts';
import { clearBuckets, hitBuckets, readBuckets } from '../store/rate-limits.ts';

export interface ThrottleLimits {
  windowSeconds: number;
  /**
   * Failures one address may have per window against one account (sign-in) or one OAuth client
   * (token endpoint); also how many failures an account takes from anywhere before its backoff.
   */
  accountFailures: number;
  /** Failures one client address may have per window, across sign-in and the token endpoint. */
  addressFailures: number;
}

/**
 * `limit`: hard, closed until the window ends. `backoff`: at the limit each further attempt
 * waits 2^(failures − limit) seconds after the last failure, at most BACKOFF_CAP_SECONDS.
 */
export interface Bucket {
  name: string;
  limit: number;
  kind: 'limit' | 'backoff';
}

/**
 * The longest wait an account's backoff imposes. Failures spread over many addresses are slowed
 * to about one guess a minute per account, and the real person, who is never locked, gets in
 * on the first attempt after the wait.
 */
export const BACKOFF_CAP_SECONDS = 60;

/** Names never hold an email or a client id in clear: the table is not a list of who tried. */
const digest = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 32);

/**
 * The account key of a sign-in: the address as PostgreSQL's `lower()` folds it, which is what
 * the account lookup compares (store/users.ts). Folding in JavaScript instead would give
 * spellings that reach the same account (`İ`, which JavaScript folds to `i̇` and the store to
 * `i`) buckets of their own.
 */
export async function accountKey(sql: Tx, email: string): Promise<string> {
  const [row] = await sql<{ key: string }[]>`select lower(${email}) as key`;
  return row!.key;
}

export const buckets = {
  /** Every failure on an account, from any address: spaces attempts out, never locks. */
  account: (limits: ThrottleLimits, key: string): Bucket => ({
    name: `signin-account:${digest(key)}`,
    limit: limits.accountFailures,
    kind: 'backoff',
  }),
  /** Failures on an account from one address: that address is shut out of it for the window. */
  accountAtAddress: (limits: ThrottleLimits, key: string, address: string): Bucket => ({
    name: `signin-account-address:${digest(key, address)}`,
    limit: limits.accountFailures,
    kind: 'limit',
  }),
  /** Failed token requests naming a client from one address. */
  clientAtAddress: (limits: ThrottleLimits, clientId: string, address: string): Bucket => ({
    name: `token-client-address:${digest(clientId, address)}`,
    limit: limits.accountFailures,
    kind: 'limit',
  }),
  address: (limits: ThrottleLimits, address: string): Bucket => ({
    name: `address:${digest(address)}`,
    limit: limits.addressFailures,
    kind: 'limit',
  }),
};

/** Seconds until every bucket lets an attempt through, or null when all do now. */
export async function retryAfter(sql: Tx, limits: ThrottleLimits, list: Bucket[]): Promise<number | null> {
  const state = await readBuckets(
    sql,
    list.map((b) => b.name),
    limits.windowSeconds,
  );
  const now = Date.now();
  let wait: number | null = null;
  for (const b of list) {
    const s = state.get(b.name);
    if (!s || s.hits < b.limit) continue;
    const opensAt =
      b.kind === 'limit'
        ? s.resetsAt.getTime()
        : Math.min(
            s.resetsAt.getTime(),
            s.lastHitAt.getTime() + 1000 * Math.min(BACKOFF_CAP_SECONDS, 2 ** (s.hits - b.limit)),
          );
    if (opensAt <= now) continue;
    wait = Math.max(wait ?? 0, Math.max(1, Math.ceil((opensAt - now) / 1000)));
  }
  return wait;
}

export function recordFailure(sql: Tx, limits: ThrottleLimits, list: Bucket[]): Promise<void> {
  return hitBuckets(
    sql,
    list.map((b) => b.name),
    limits.windowSeconds,
  );
}

/** A successful sign-in forgives the account's failures (an address keeps its own count). */
export function forgive(sql: Tx, list: Bucket[]): Promise<void> {
  return clearBuckets(
    sql,
    list.map((b) => b.name),
  );
}
