import type { MiddlewareHandler } from 'hono';
import { contentSecurityPolicy } from './csp.ts';

/**
 * The browser-safety headers on every response. Pages must not be framed (clickjacking on consent
 * and review buttons). `same-origin` sends no referrer to other sites, yet lets the browser send
 * our own Origin on our forms, which the sign-in form's CSRF check reads (`no-referrer` would
 * make every form's Origin "null"). The rest is the common hardening set: HSTS, nosniff, no
 * cross-origin reads or openers, no legacy XSS auditor.
 */
const BROWSER_SAFETY: Readonly<Record<string, string>> = {
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'same-origin',
  'strict-transport-security': 'max-age=15552000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

/** Sets BROWSER_SAFETY on every response, over anything a route set. */
export function safetyHeaders(): MiddlewareHandler {
  return async function secureHeaders(c, next) {
    await next();
    for (const name in BROWSER_SAFETY) c.res.headers.set(name, BROWSER_SAFETY[name]!);
  };
}

/**
 * What `safetyHeaders` and `strictCsp` (api/middleware/csp.ts) put on a response that chose no
 * policy of its own, as one plain object: the MCP door (api/mcp/door.ts) answers in front of the
 * router and sends these. test/mcp/door.test.ts compares them with the router's own answer.
 */
export const SAFETY_HEADERS: Readonly<Record<string, string>> = {
  ...BROWSER_SAFETY,
  'content-security-policy': contentSecurityPolicy(),
};
