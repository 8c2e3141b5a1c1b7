// Known devices (OWASP "Blocking Brute Force Attacks", device cookies): a browser that signed in
// to an account before carries a signed cookie naming that account. The account-wide backoff of
// identity/throttle.ts is fed by every address, so strangers can keep it closed; an attempt with
// the account's own device cookie is exempt from it, so the real person gets in at once. Such an
// attempt still obeys the per-address limits, and a device's failures are counted on their own:
// a stolen cookie buys `accountFailures` guesses per window, then it exempts no more.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../store/crypto.ts';
import type { Tx } from '../store/db.ts';
import { type Bucket, retryAfter, type ThrottleLimits } from './throttle.ts';

const MAC_LABEL = 'known-device-cookie';
/** Long-lived: the cookie only ever grants an exemption from the account's shared backoff. */
export const DEVICE_COOKIE_SECONDS = 365 * 24 * 3600;

export interface KnownDevice {
  userId: string;
  deviceId: string;
}

/** Under https the `__Host-` prefix binds it to this host, as the session cookie (RFC 6265bis §4.1.3.2). */
export function deviceCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https://') ? '__Host-cs_device' : 'cs_device';
}

const mac = (key: Buffer, userId: string, deviceId: string) =>
  createHmac('sha256', key).update(`${userId}\n${deviceId}`).digest();

/** `userId.deviceId.mac`, the MAC under a key derived from the service key. */
export function issueDeviceCookie(keyring: Keyring, userId: string, deviceId?: string): string {
  const id = deviceId ?? randomBytes(18).toString('base64url');
  return `${userId}.${id}.${mac(keyring.deriveKey(MAC_LABEL), userId, id).toString('base64url')}`;
}

/** The device a cookie names when its MAC holds under any key of the ring; null otherwise. */
export function readDeviceCookie(keyring: Keyring, value: string | undefined): KnownDevice | null {
  const parts = value?.split('.') ?? [];
  if (parts.length !== 3) return null;
  const [userId, deviceId, tag] = parts as [string, string, string];
  if (!userId || !/^[A-Za-z0-9_-]{24}$/.test(deviceId)) return null;
  const given = Buffer.from(tag, 'base64url');
  for (const key of keyring.deriveKeys(MAC_LABEL)) {
    const want = mac(key, userId, deviceId);
    if (given.length === want.length && timingSafeEqual(given, want)) return { userId, deviceId };
  }
  return null;
}

/** The failures counted against one device cookie (a hard count: it only ends the exemption). */
export function deviceBucket(limits: ThrottleLimits, device: KnownDevice): Bucket {
  return { name: `signin-device:${device.deviceId}`, limit: limits.accountFailures, kind: 'limit' };
}

/**
 * The device when it exempts this sign-in from the account's backoff: its cookie is for one of
 * the accounts the address names, and it has failures left this window.
 */
export async function exemptingDevice(
  sql: Tx,
  limits: ThrottleLimits,
  device: KnownDevice | null,
  accountIds: string[],
): Promise<KnownDevice | null> {
  if (!device || !accountIds.includes(device.userId)) return null;
  return (await retryAfter(sql, limits, [deviceBucket(limits, device)])) === null ? device : null;
}
