import { Hono } from 'hono';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import * as E from '../../identity/oauth-errors.ts';
import { oauthErrorResponse } from './errors.ts';

// STYLE.md 6: a table pins each OAuth error class to its `error` code and HTTP status.
const TABLE: Array<[new (d: string, r?: string) => E.OAuthError, string, number]> = [
  [E.InvalidRequest, 'invalid_request', 400],
  [E.InvalidClient, 'invalid_client', 401],
  [E.InvalidGrant, 'invalid_grant', 400],
  [E.UnauthorizedClient, 'unauthorized_client', 400],
  [E.UnsupportedGrantType, 'unsupported_grant_type', 400],
  [E.UnsupportedResponseType, 'unsupported_response_type', 400],
  [E.InvalidScope, 'invalid_scope', 400],
  [E.InvalidTarget, 'invalid_target', 400],
  [E.AccessDenied, 'access_denied', 400],
  [E.InvalidRedirectUri, 'invalid_redirect_uri', 400],
  [E.InvalidClientMetadata, 'invalid_client_metadata', 400],
  [E.UnsupportedTokenType, 'unsupported_token_type', 400],
  [E.InvalidToken, 'invalid_token', 401],
  [E.InsufficientScope, 'insufficient_scope', 403],
];

async function render(err: E.OAuthError, basic = false): Promise<Response> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
  const app = new Hono();
  app.get('/', (c) => oauthErrorResponse(c, err, logger, { basic }));
  const res = await app.request('/');
  expect(lines.join('')).toContain(err.reason);
  return res;
}

describe('OAuth error rendering (RFC 6749 §5.2)', () => {
  it.each(TABLE)('%o renders as %s with status %i', async (Cls, code, status) => {
    const res = await render(new Cls('public description', 'internal reason'));
    expect(res.status).toBe(status);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    // The internal reason is logged, never sent.
    expect(body).toEqual({ error: code, error_description: 'public description' });
  });

  it('adds the Basic challenge to invalid_client only when the client used Basic', async () => {
    expect((await render(new E.InvalidClient('x'), true)).headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await render(new E.InvalidClient('x'), false)).headers.get('www-authenticate')).toBeNull();
    expect((await render(new E.InvalidGrant('x'), true)).headers.get('www-authenticate')).toBeNull();
  });
});
