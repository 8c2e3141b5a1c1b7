import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { requestIdentity } from '../../governance/actors.ts';
import {
  authenticateApiKey,
  authenticatePersonalToken,
  authenticateSession,
} from '../../identity/authenticate.ts';
import type { Principal } from '../../identity/principal.ts';
import type { Sql } from '../../store/db.ts';
import type { AppEnv } from '../env.ts';
import { forbidden, unauthorized } from '../errors.ts';

export const SESSION_COOKIE = 'cs_session';

/** Under https the session cookie is `__Host-` prefixed (see setSessionCookie in api/web/sign-in/session.tsx). */
export function sessionCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https://') ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** The credential kinds a route accepts (SPEC.md 5: x-api-key, Bearer, and the web session). */
export type CredentialKind = 'api_key' | 'token' | 'session';

/**
 * Authenticates the request with the first credential present among the allowed kinds.
 * A present but bad credential is a 401 even when another kind would be allowed: a caller
 * that sent a wrong key must learn so rather than silently act as someone else.
 */
export function authenticate(sql: Sql, allowed: CredentialKind[]): MiddlewareHandler<AppEnv> {
  const allow = new Set(allowed);
  const challenge = allow.has('token') ? 'Bearer realm="countersign"' : undefined;
  return async function authenticateRequest(c, next) {
    const apiKey = c.req.header('x-api-key');
    const authorization = c.req.header('authorization');
    const cookie = getCookie(c, c.get('sessionCookie'));
    let principal: Principal | null = null;
    let csrfToken: string | null = null;
    let key: { actAsAllowed: boolean } | null = null;
    if (apiKey !== undefined && allow.has('api_key')) {
      const identity = await authenticateApiKey(sql, apiKey.trim());
      if (!identity)
        throw withChallenge(unauthorized('the API key is invalid, revoked or its owner disabled'), challenge);
      principal = identity.principal;
      key = { actAsAllowed: identity.actAsAllowed };
    } else if (authorization !== undefined && allow.has('token')) {
      const m = /^Bearer\s+(\S+)$/i.exec(authorization);
      principal = m ? await authenticatePersonalToken(sql, m[1]!) : null;
      if (!principal)
        throw withChallenge(unauthorized('the bearer token is invalid, expired or revoked'), challenge);
    } else if (cookie !== undefined && allow.has('session')) {
      const session = await authenticateSession(sql, cookie);
      if (!session) throw unauthorized('the session has ended; sign in again');
      principal = session.principal;
      csrfToken = session.csrfToken;
      // A cookie rides along on cross-site requests; unsafe methods must prove they come from
      // our own pages by echoing the session's CSRF token (OWASP double-submit variant).
      if (!SAFE_METHODS.has(c.req.method) && !csrfMatches(c.req.header('x-csrf-token'), csrfToken)) {
        throw forbidden('missing or wrong x-csrf-token for a session-authenticated request');
      }
    } else {
      throw withChallenge(unauthorized(missingMessage(allow)), challenge);
    }
    const identity = await requestIdentity(sql, principal, c.req.header('x-act-as-user'), key, {
      method: c.req.method,
      path: c.req.path,
    });
    c.set('principal', identity.principal);
    c.set('actor', identity.actor);
    c.set('csrfToken', csrfToken);
    await next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function csrfMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function missingMessage(allow: Set<CredentialKind>): string {
  const names: string[] = [];
  if (allow.has('api_key')) names.push('an x-api-key header');
  if (allow.has('token')) names.push('an Authorization: Bearer token');
  if (allow.has('session')) names.push('a session cookie');
  return `credentials required: send ${names.join(' or ')}`;
}

function withChallenge<E extends Error>(err: E, challenge: string | undefined): E {
  if (challenge) Object.assign(err, { challenge });
  return err;
}

/** Only an admin or super admin passes (an API key: when its owner, or the person it acts for, is one). */
export function requireAdmin(): MiddlewareHandler<AppEnv> {
  return async function requireAdminRole(c, next) {
    const p = c.get('principal');
    if (p.role === 'member') throw forbidden('this needs the admin role');
    await next();
  };
}
