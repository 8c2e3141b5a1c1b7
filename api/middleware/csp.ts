import type { MiddlewareHandler } from 'hono';

/**
 * One strict Content-Security-Policy on every response (CSP Level 3): scripts and styles only
 * from this origin — no inline script, no inline event handler, no eval — so markup that ever
 * slipped past escaping could run nothing; no plugins; no <base> to re-point relative URLs; no
 * framing (clickjacking on consent and review buttons); forms post only here. `formAction` adds
 * where one page's form may legitimately end: browsers check form-action on every redirect that
 * follows a submission (CSP3 §6.2.1 form-action), and the OAuth consent form ends at the client's
 * redirect URI (RFC 6749 §4.1.2).
 */
export function contentSecurityPolicy(formAction: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    `form-action ${["'self'", ...formAction].join(' ')}`,
  ].join('; ');
}

/**
 * The form-action source for a redirect URI: its origin for http(s), its scheme for a
 * private-use scheme of a native app (RFC 8252 §7.1). Null for anything unparsable.
 */
export function formActionSource(redirectUri: string): string | null {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return null;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  if (['javascript:', 'data:', 'blob:', 'filesystem:', 'about:'].includes(url.protocol)) return null;
  return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : null;
}

/** Sets the strict policy unless a route already chose a full one (with its own form-action). */
export function strictCsp(): MiddlewareHandler {
  return async function contentSecurityPolicyHeader(c, next) {
    await next();
    const chosen = c.res.headers.get('content-security-policy');
    if (!chosen?.includes('default-src'))
      c.res.headers.set('content-security-policy', contentSecurityPolicy());
  };
}
