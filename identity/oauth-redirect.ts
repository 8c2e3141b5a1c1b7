// Redirect URI rules: which URIs a client may register, and how a requested URI matches one.

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
// Schemes a browser would execute or read locally instead of handing to an application.
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'about:',
  'blob:',
  'ftp:',
  'ws:',
  'wss:',
]);

/** Why a redirect URI cannot be registered, or null when it can. */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URI';
  }
  // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment component.
  if (url.hash !== '' || value.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    // OAuth 2.1 §1.5 / RFC 8252 §7.3: plain http only for the loopback interface of a native app.
    return LOOPBACK_HOSTS.has(url.hostname) ? null : 'must use https (http is allowed only for loopback)';
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`;
  // RFC 8252 §7.1: private-use URI scheme of a native app.
  // DEVIATION: RFC 8252 §7.1 says such schemes SHOULD be reverse domain names (contain a
  // period); real clients register e.g. `cursor://…`, so any other syntactically valid scheme
  // is accepted. The user still sees the exact scheme on the consent screen.
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? null : 'has an invalid scheme';
}

/** True for an http URI on the loopback interface (RFC 8252 §7.3). */
export function isLoopback(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Whether a requested redirect URI matches a registered one.
 * OAuth 2.1 §4.1.1 / RFC 9700 §4.1.3: exact string comparison. The one exception is the
 * loopback redirect of a native app (RFC 8252 §7.3: the port MUST be allowed to vary, since the
 * app picks a free port at request time); `localhost` is treated as `127.0.0.1`, because
 * clients register one and then listen on the other.
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  if (!isLoopback(registered) || !isLoopback(requested)) return false;
  const a = new URL(registered);
  const b = new URL(requested);
  return (
    canonicalLoopbackHost(a.hostname) === canonicalLoopbackHost(b.hostname) &&
    a.pathname === b.pathname &&
    a.search === b.search
  );
}

function canonicalLoopbackHost(host: string): string {
  return host === 'localhost' ? '127.0.0.1' : host;
}

/** The registered URI a request's redirect_uri matches, or null. */
export function findRedirectUri(registered: string[], requested: string): string | null {
  return registered.find((r) => redirectUriMatches(r, requested)) ?? null;
}

/** What the consent screen names: the host (and scheme when it is not https). */
export function redirectDisplay(value: string): string {
  const url = new URL(value);
  if (url.protocol === 'https:') return url.host;
  if (url.protocol === 'http:') return `${url.hostname} (this computer)`;
  return `${url.protocol}//${url.host} (an application on this computer)`;
}
