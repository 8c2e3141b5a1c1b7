import type { Context } from 'hono';

/**
 * True when an unsafe request without a session comes from our own pages: the login-CSRF
 * defence (OWASP CSRF cheat sheet, "Login CSRF"; Fetch Metadata). A browser sends `Origin` on
 * every POST — the string "null" when its referrer policy withholds the origin — and
 * `Sec-Fetch-Site` on every request; a page on another site can forge neither. A request with
 * neither header does not come from a browser, and login CSRF needs one.
 */
export function fromOwnOrigin(c: Context, baseUrl: string): boolean {
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== 'null') return origin === new URL(baseUrl).origin;
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  return origin === undefined;
}
