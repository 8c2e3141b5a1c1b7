// The authorization endpoint's domain (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707, RFC 9207).
// Each check of an authorization request is a small function; `checkAuthorizationRequest`
// lists them in the order they run.
import { createHash } from 'node:crypto';
import type { Config } from '../config/env.ts';
import type { Sql, Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { findConsent, insertCode, type OAuthClientRow, saveConsent } from '../store/oauth.ts';
import { mintSecret } from '../store/secrets.ts';
import { CimdRefused } from './cimd/errors.ts';
import type { FetchConfig } from './cimd/fetch.ts';
import { resolveClient } from './cimd/resolve.ts';
import { SUPPORTED_SCOPES } from './oauth-clients.ts';
import {
  InvalidRequest,
  InvalidScope,
  InvalidTarget,
  OAuthError,
  UnauthorizedClient,
  UnsupportedResponseType,
} from './oauth-errors.ts';
import { findRedirectUri } from './oauth-redirect.ts';

export const CODE_KIND = 'csoac';

/** A request that passed every check: what the consent screen shows and the code binds. */
export interface AuthorizationRequest {
  client: OAuthClientRow;
  /** The redirect URI exactly as requested (loopback with its port), where the code goes. */
  redirectUri: string;
  state: string | null;
  scope: string;
  resource: string;
  codeChallenge: string;
}

/**
 * A request whose client or redirect URI is unknown: shown as an error page and NEVER
 * redirected (RFC 6749 §4.1.2.1, RFC 9700 §4.11: else the endpoint is an open redirector).
 */
export class AuthorizationPageError extends Error {
  constructor(
    readonly userMessage: string,
    /** Logged only. */
    readonly reason: string = userMessage,
  ) {
    super(userMessage);
    this.name = 'AuthorizationPageError';
  }
}

/** An error the client must learn of at its redirect URI, with state and iss (RFC 9207). */
export class RedirectableError extends Error {
  constructor(
    readonly redirectUri: string,
    readonly state: string | null,
    override readonly cause: OAuthError,
  ) {
    super(cause.description);
    this.name = 'RedirectableError';
  }
}

type Params = URLSearchParams;
type Deps = {
  sql: Sql;
  config: Pick<Config, 'baseUrl' | 'oauth' | 'cimd' | 'cimdFetchesPerAddress'> & FetchConfig;
};

/** The MCP endpoint: the one resource this server issues tokens for (RFC 8707, RFC 9728 §2). */
export function mcpResource(baseUrl: string): string {
  return `${baseUrl}/mcp`;
}

/** Runs every check in order; throws AuthorizationPageError or RedirectableError. */
export async function checkAuthorizationRequest(
  deps: Deps,
  p: Params,
  address: string | null = null,
): Promise<AuthorizationRequest> {
  // These two run first and never redirect: nothing is known to be the client's yet.
  checkNoRepeatedParameters(p);
  const client = await checkClient(deps, p, address);
  const redirectUri = checkRedirectUri(client, p);
  const state = p.get('state');
  const fail = (err: OAuthError) => new RedirectableError(redirectUri, state, err);
  try {
    checkResponseType(client, p);
    const codeChallenge = checkPkce(p);
    const scope = checkScope(client, p);
    const resource = checkResource(p, mcpResource(deps.config.baseUrl));
    return { client, redirectUri, state, scope, resource, codeChallenge };
  } catch (err) {
    if (err instanceof OAuthError) throw fail(err);
    throw err;
  }
}

/** RFC 6749 §3.1: request and response parameters MUST NOT be included more than once. */
function checkNoRepeatedParameters(p: Params): void {
  const seen = new Set<string>();
  for (const key of p.keys()) {
    if (seen.has(key)) throw new AuthorizationPageError(`The parameter "${key}" appears more than once.`);
    seen.add(key);
  }
}

/**
 * A registered client, or one whose client_id is the https URL of its metadata document (fetched
 * and checked here; MCP authorization 2025-11-25 "Client ID Metadata Documents"). A document that
 * cannot be used is an error page like an unknown client: its redirect URIs are unverified.
 */
async function checkClient(deps: Deps, p: Params, address: string | null): Promise<OAuthClientRow> {
  const id = p.get('client_id');
  try {
    const client = id
      ? await resolveClient(deps, id, {
          beforeFetch: () => checkBeforeFetch(p, deps.config.baseUrl),
          ...(address ? { address: { value: address, limit: deps.config.cimdFetchesPerAddress } } : {}),
        })
      : null;
    if (!client) throw new AuthorizationPageError('This application is not registered with Countersign.');
    return client;
  } catch (err) {
    if (err instanceof CimdRefused) {
      throw new AuthorizationPageError(
        `This application's metadata document cannot be used: ${err.why}.`,
        err.reason,
      );
    }
    throw err;
  }
}

/**
 * A metadata document is fetched only for a request that could succeed: the checks that need no
 * client run first, so an anonymous request cannot make the server fetch URLs with a request
 * that would fail anyway. They are error pages (the client's redirect URIs are not known yet).
 */
function checkBeforeFetch(p: Params, baseUrl: string): void {
  const refuse = (what: string) => new AuthorizationPageError(`The request is not valid: ${what}.`, what);
  if (p.get('response_type') !== 'code') throw refuse('response_type must be code');
  const challenge = p.get('code_challenge');
  if (p.get('code_challenge_method') !== 'S256' || !challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
    throw refuse('a PKCE code_challenge with method S256 is required');
  const redirect = p.get('redirect_uri');
  if (redirect === null || !URL.canParse(redirect) || redirect.includes('#'))
    throw refuse('redirect_uri must be an absolute URI without a fragment');
  const resource = p.get('resource');
  if (resource !== null && !sameResource(resource, mcpResource(baseUrl)))
    throw refuse('the resource is not this MCP server');
}

/**
 * OAuth 2.1 §4.1.1: exact match against a registered URI (RFC 8252 §7.3 loopback ports vary).
 * redirect_uri may be omitted only when exactly one is registered.
 */
function checkRedirectUri(client: OAuthClientRow, p: Params): string {
  const requested = p.get('redirect_uri');
  if (requested === null) {
    if (client.redirect_uris.length === 1) return client.redirect_uris[0]!;
    throw new AuthorizationPageError('The application did not say where to return to.');
  }
  if (!findRedirectUri(client.redirect_uris, requested)) {
    throw new AuthorizationPageError('The application asked to return to an address it did not register.');
  }
  return requested;
}

function checkResponseType(client: OAuthClientRow, p: Params): void {
  const type = p.get('response_type');
  if (type === null) throw new InvalidRequest('response_type is required');
  // OAuth 2.1 §4.1.1: only the authorization code flow; the implicit grant is gone.
  if (type !== 'code') throw new UnsupportedResponseType('only response_type=code is supported');
  if (!client.response_types.includes('code'))
    throw new UnauthorizedClient('the client did not register response type code');
}

/**
 * RFC 9700 §2.1.1 and OAuth 2.1 §4.1.1: PKCE is required of every client, and only S256:
 * `plain` would hand the verifier to anyone who sees the request. RFC 7636 §4.3: a missing
 * method means `plain`, so it is refused too.
 */
function checkPkce(p: Params): string {
  const challenge = p.get('code_challenge');
  const method = p.get('code_challenge_method');
  if (challenge === null) throw new InvalidRequest('code_challenge is required (PKCE, S256)');
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');
  // RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters.
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge))
    throw new InvalidRequest('code_challenge is not a S256 challenge');
  return challenge;
}

/** The granted scope: what was asked for (default: the client's registered scope), if supported. */
function checkScope(client: OAuthClientRow, p: Params): string {
  const asked = (p.get('scope') ?? client.scope).split(' ').filter(Boolean);
  const allowed = new Set(client.scope.split(' '));
  const bad = asked.find((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s) || !allowed.has(s));
  if (bad !== undefined)
    throw new InvalidScope(`scope ${JSON.stringify(bad)} is not available to this client`);
  return asked.length > 0 ? [...new Set(asked)].join(' ') : client.scope;
}

/**
 * RFC 8707 §2: the resource must be an absolute URI without fragment, and one this server
 * protects; the MCP authorization spec (2025-11-25, "Resource Parameter Implementation")
 * requires clients to send it. A client that omits it gets a token for the MCP resource,
 * the only one there is.
 */
function checkResource(p: Params, resource: string): string {
  const asked = p.get('resource');
  if (asked === null) return resource;
  if (!sameResource(asked, resource)) throw new InvalidTarget('the resource is not this MCP server');
  return resource;
}

/** Resource URIs compare without a trailing slash (the MCP spec's canonical form has none). */
export function sameResource(asked: string, resource: string): boolean {
  if (asked.includes('#')) return false;
  return asked.replace(/\/+$/, '') === resource;
}

/**
 * True when the user consented to this client, for at least this scope, at this very redirect
 * URI, recently enough. A loopback client may change its port between runs (RFC 8252 §7.3), and
 * any local process can claim a port: a new port is a new place to send codes to, so the person
 * is asked again.
 */
export async function hasConsent(sql: Tx, userId: string, req: AuthorizationRequest): Promise<boolean> {
  const consent = await findConsent(sql, userId, req.client.id, req.redirectUri);
  if (!consent) return false;
  const granted = new Set(consent.scope.split(' '));
  return req.scope.split(' ').every((s) => granted.has(s));
}

/**
 * Issues a single-use code bound to client, redirect URI, PKCE challenge and resource
 * (RFC 9700 §4.5, §2.1.1) and remembers the consent. Returns the URL to send the browser to.
 */
export async function approve(deps: Deps, userId: string, req: AuthorizationRequest): Promise<string> {
  const id = newId('ocd');
  const code = mintSecret(CODE_KIND, id);
  await deps.sql.begin(async (tx) => {
    await saveConsent(tx, {
      userId,
      clientId: req.client.id,
      redirectUri: req.redirectUri,
      scope: req.scope,
      expiresAt: new Date(Date.now() + deps.config.oauth.consentSeconds * 1000),
    });
    await insertCode(tx, {
      id,
      code_hash: code.hash,
      client_id: req.client.id,
      user_id: userId,
      redirect_uri: req.redirectUri,
      code_challenge: req.codeChallenge,
      scope: req.scope,
      resource: req.resource,
      expires_at: new Date(Date.now() + deps.config.oauth.codeSeconds * 1000),
    });
  });
  return redirectTo(req.redirectUri, { code: code.secret, state: req.state }, deps.config.baseUrl);
}

/** The user said no (RFC 6749 §4.1.2.1 access_denied). */
export function deny(deps: Deps, req: AuthorizationRequest): string {
  return redirectTo(
    req.redirectUri,
    { error: 'access_denied', error_description: 'the user denied access', state: req.state },
    deps.config.baseUrl,
  );
}

/**
 * Builds a redirect to the client. RFC 9207 §2: every authorization response, success or
 * error, carries `iss`, so a client talking to several servers can tell which one answered.
 */
export function redirectTo(
  redirectUri: string,
  params: Record<string, string | null>,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) if (value !== null) url.searchParams.set(key, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
