import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/**
 * The address a request came from, for rate limits. Behind `trustedProxies` reverse proxies the
 * socket peer is the nearest proxy; each proxy appends the address it saw to X-Forwarded-For,
 * so the client is that many entries from the right. Entries further left are the client's own
 * claims and never trusted.
 */
export function clientAddress(c: Context, trustedProxies: number): string {
  const peer = getConnInfo(c).remote.address ?? 'unknown';
  if (trustedProxies === 0) return peer;
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return forwarded[forwarded.length - trustedProxies] ?? peer;
}
