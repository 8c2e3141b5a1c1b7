import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import { authenticateClient, triedBasic } from '../../identity/oauth-clients.ts';
import { InvalidRequest, OAuthError, UnsupportedGrantType } from '../../identity/oauth-errors.ts';
import { exchangeCode, refreshGrant, revokeToken } from '../../identity/oauth-tokens.ts';
import { buckets, recordFailure, retryAfter } from '../../identity/throttle.ts';
import type { AppEnv } from '../env.ts';
import { clientAddress } from '../middleware/client-address.ts';
import { openCors } from './cors.ts';
import { NO_STORE, oauthErrorResponse } from './errors.ts';

type TokenRouteDeps = Pick<Deps, 'sql' | 'keyring' | 'config' | 'logger'>;

/** POST /oauth/token (OAuth 2.1 §3.2) and POST /oauth/revoke (RFC 7009). */
export function tokenRoutes(deps: TokenRouteDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('/oauth/token', openCors());
  app.use('/oauth/revoke', openCors());

  app.post('/oauth/token', (c) =>
    guarded(c, deps, async (form) => {
      const client = await authenticateClient(deps, credentials(c, form));
      const grantType = form.get('grant_type');
      const body =
        grantType === 'authorization_code'
          ? await exchangeCode(deps, client, {
              code: form.get('code'),
              redirectUri: form.get('redirect_uri'),
              codeVerifier: form.get('code_verifier'),
              resource: form.get('resource'),
            })
          : grantType === 'refresh_token'
            ? await refreshGrant(deps, client, {
                refreshToken: form.get('refresh_token'),
                scope: form.get('scope'),
                resource: form.get('resource'),
              })
            : unsupported(grantType);
      return c.json(body, 200, NO_STORE);
    }),
  );

  app.post('/oauth/revoke', (c) =>
    guarded(c, deps, async (form) => {
      const client = await authenticateClient(deps, credentials(c, form));
      const token = form.get('token');
      if (!token) throw new InvalidRequest('token is required');
      // RFC 7009 §2.1: token_type_hint is only a hint; both kinds are looked up regardless.
      await revokeToken(deps, client, token);
      // RFC 7009 §2.2: 200 whether or not the token was known.
      return c.body(null, 200, NO_STORE);
    }),
  );
  return app;
}

function unsupported(grantType: string | undefined): never {
  throw new UnsupportedGrantType(
    grantType
      ? `grant type ${JSON.stringify(grantType.slice(0, 50))} is not supported`
      : 'grant_type is required',
  );
}

/** Single-valued form parameters; a repeated one is refused (RFC 6749 §3.2: MUST NOT repeat). */
interface Form {
  get(name: string): string | undefined;
}

async function readForm(c: Context): Promise<Form> {
  // RFC 6749 §3.2: the token endpoint takes application/x-www-form-urlencoded.
  if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    throw new InvalidRequest('the body must be application/x-www-form-urlencoded');
  }
  const params = new URLSearchParams(await c.req.text());
  for (const key of new Set(params.keys())) {
    if (params.getAll(key).length > 1) throw new InvalidRequest(`parameter ${key} is repeated`);
  }
  return { get: (name) => params.get(name) ?? undefined };
}

function credentials(c: Context, form: Form) {
  return {
    authorization: c.req.header('authorization'),
    clientId: form.get('client_id'),
    clientSecret: form.get('client_secret'),
  };
}

/**
 * Runs a token-endpoint request under the failure limits: a failed request counts against its
 * client address, and against the client id it named *from that address*. At a limit the endpoint
 * answers 429 with Retry-After (RFC 6585 §4) before looking at the request, so guessing codes,
 * refresh tokens or client secrets from one address is slowed to the limit. No count is kept per
 * client id alone: a public client's id is no secret (one metadata-document URL is shared by all
 * its users), so failures anyone can cause must not refuse the valid refreshes of everyone else.
 * Codes, refresh tokens and client secrets are 256-bit random values, so guessing spread over many
 * addresses gains nothing the per-address limits need to stop.
 */
async function guarded(
  c: Context,
  deps: TokenRouteDeps,
  handle: (form: Form) => Promise<Response>,
): Promise<Response> {
  const limits = deps.config.rateLimits;
  const address = clientAddress(c, deps.config.trustedProxies);
  let limited = [buckets.address(limits, address)];
  try {
    const form = await readForm(c);
    const clientId = form.get('client_id') ?? basicClientId(c.req.header('authorization'));
    if (clientId) limited = [...limited, buckets.clientAtAddress(limits, clientId, address)];
    const wait = await retryAfter(deps.sql, limits, limited);
    if (wait !== null) {
      return c.json(
        { error: 'invalid_request', error_description: `too many failed requests; retry in ${wait} seconds` },
        429,
        { ...NO_STORE, 'retry-after': String(wait) },
      );
    }
    return await handle(form);
  } catch (err) {
    if (err instanceof OAuthError) {
      await recordFailure(deps.sql, limits, limited);
      return oauthErrorResponse(c, err, deps.logger, { basic: triedBasic(c.req.header('authorization')) });
    }
    throw err;
  }
}

/** The client id of HTTP Basic client authentication (RFC 6749 §2.3.1), for counting only. */
function basicClientId(authorization: string | undefined): string | undefined {
  const m = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    return decodeURIComponent(decoded.slice(0, colon));
  } catch {
    return undefined;
  }
}
