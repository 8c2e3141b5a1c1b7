// Rate limits on guessing (issue 18.4): sign-in and the token endpoint count failures per account
// or OAuth client and per client address, in the store so every API replica shares the counts.
// A bucket at its limit answers 429 with Retry-After until its window ends (RFC 6585 §4).
import { createHash } from 'node:crypto';
import type { Tx } from '../store/db.ts';
import { clearBucket, hitBuckets, readBuckets } from '../store/rate-limits.ts';

export interface ThrottleLimits {
  windowSeconds: number;
  /** Failures one account (sign-in) or one OAuth client (token endpoint) may have per window. */
  accountFailures: number;
  /** Failures one client address may have per window, across sign-in and the token endpoint. */
  addressFailures: number;
}

export interface Bucket {
  name: string;
  limit: number;
}

/** Names never hold an email or a client id in clear: the table is not a list of who tried. */
const digest = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 32);

export const buckets = {
  account: (limits: ThrottleLimits, email: string): Bucket => ({
    name: `signin-account:${digest(email.trim().toLowerCase())}`,
    limit: limits.accountFailures,
  }),
  client: (limits: ThrottleLimits, clientId: string): Bucket => ({
    name: `token-client:${digest(clientId)}`,
    limit: limits.accountFailures,
  }),
  address: (limits: ThrottleLimits, address: string): Bucket => ({
    name: `address:${digest(address)}`,
    limit: limits.addressFailures,
  }),
};

/** Seconds until the fullest bucket at its limit opens again, or null when none is at its limit. */
export async function retryAfter(sql: Tx, limits: ThrottleLimits, list: Bucket[]): Promise<number | null> {
  const state = await readBuckets(
    sql,
    list.map((b) => b.name),
    limits.windowSeconds,
  );
  let wait: number | null = null;
  for (const b of list) {
    const s = state.get(b.name);
    if (!s || s.hits < b.limit) continue;
    const seconds = Math.max(1, Math.ceil((s.resetsAt.getTime() - Date.now()) / 1000));
    wait = Math.max(wait ?? 0, seconds);
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

/** A successful sign-in forgives the account's failures (the address keeps its count). */
export function forgive(sql: Tx, bucket: Bucket): Promise<void> {
  return clearBucket(sql, bucket.name);
}
