// The one place OAuth errors become HTTP responses (STYLE.md 6). The wire carries the error code
// and the public description; the internal reason goes to the log only.
import type { Context } from 'hono';
import type { Logger } from '../../core/logger.ts';
import { type RedirectableError, redirectTo } from '../../identity/oauth-authorize.ts';
import { InvalidClient, type OAuthError } from '../../identity/oauth-errors.ts';

/** RFC 6749 §5.2 error response; `basic` adds the challenge a Basic-authenticating client expects. */
export function oauthErrorResponse(
  c: Context,
  err: OAuthError,
  logger: Logger,
  opts: { basic?: boolean } = {},
): Response {
  logger.info(
    { oauthError: err.error, reason: err.reason, requestId: c.get('requestId') },
    'oauth request refused',
  );
  const headers: Record<string, string> = { 'cache-control': 'no-store', 'content-type': 'application/json' };
  // RFC 6749 §5.2: 401 with WWW-Authenticate when the client authenticated via the Authorization header.
  if (err instanceof InvalidClient && opts.basic) headers['www-authenticate'] = 'Basic realm="countersign"';
  return c.body(
    JSON.stringify({ error: err.error, error_description: err.description }),
    err.status,
    headers,
  );
}

/** Headers for every response that carries a token or a code (RFC 6749 §5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/**
 * RFC 6749 §4.1.2.1: an authorization error the client learns at its redirect URI, with `state`
 * and (RFC 9207 §2) `iss`. 303 after a POST so the browser does not re-post the form.
 */
export function oauthErrorRedirect(
  c: Context,
  err: RedirectableError,
  issuer: string,
  logger: Logger,
): Response {
  logger.info({ oauthError: err.cause.error, reason: err.cause.reason }, 'authorization request refused');
  const params = { error: err.cause.error, error_description: err.cause.description, state: err.state };
  return c.redirect(redirectTo(err.redirectUri, params, issuer), c.req.method === 'POST' ? 303 : 302);
}
