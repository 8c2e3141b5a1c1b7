// Bearer authentication of MCP requests (MCP authorization 2025-11-25; RFC 6750; RFC 9728 §5.1).
import type { Deps } from '../../core/deps.ts';
import { authenticateAccessToken, type OAuthCaller } from '../../identity/oauth-access.ts';

/** Why a request was refused, shaped as the challenge RFC 6750 §3 describes. */
export interface BearerRefusal {
  status: 401 | 403;
  challenge: string;
  /** The JSON body: the same error code as the challenge (none without a token), and words for people. */
  body: { error?: string; error_description: string };
}

/**
 * The `WWW-Authenticate` value. RFC 9728 §5.1: `resource_metadata` points at the protected
 * resource metadata (an absolute URL); the MCP spec (2025-11-25, "Protected Resource Metadata
 * Discovery Requirements") has servers send it and `scope` on every 401. RFC 6750 §3.1:
 * `error` only when a token was presented (a request without one just learns how to get one).
 */
export function bearerChallenge(baseUrl: string, error?: 'invalid_token' | 'insufficient_scope'): string {
  const parts = [`resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`, 'scope="mcp"'];
  if (error) parts.push(`error="${error}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** Authenticates the request's bearer token; a refusal carries the status and challenge. */
export async function authenticateMcp(
  deps: Pick<Deps, 'sql' | 'keyring' | 'config'>,
  authorization: string | undefined,
): Promise<OAuthCaller | BearerRefusal> {
  const base = deps.config.baseUrl;
  // RFC 6750 §2.1: the header form only (bearer_methods_supported: ["header"]).
  const m = authorization ? /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization) : null;
  if (!m)
    return authorization
      ? invalidToken(base)
      : { status: 401, challenge: bearerChallenge(base), body: { error_description: NEEDS_TOKEN } };
  const caller = await authenticateAccessToken(deps, m[1]!);
  if (!caller) return invalidToken(base);
  // An organization may disable a client for all its people: its tokens stop working.
  if (caller.client.limits.disabled)
    return {
      status: 401,
      challenge: bearerChallenge(base, 'invalid_token'),
      body: {
        error: 'invalid_token',
        error_description: `your organization has disabled the AI client ${caller.client.name}`,
      },
    };
  // RFC 6750 §3.1: a valid token without the needed scope is 403 insufficient_scope.
  if (!caller.scopes.includes('mcp'))
    return {
      status: 403,
      challenge: bearerChallenge(base, 'insufficient_scope'),
      body: { error: 'insufficient_scope', error_description: 'the access token lacks scope mcp' },
    };
  return caller;
}

// The MCP door (api/mcp/door.ts) checks a request's token before it decides to hand the request
// on to the router. The route then answers with that check instead of making it again: a refused
// token costs one lookup, not two, and a store that does not answer one connection timeout.
// Keyed by the very Request object the door hands on, which only this process makes.
const checkedByDoor = new WeakMap<Request, Promise<OAuthCaller | BearerRefusal>>();

/** Keeps the door's check of `req` for the route that answers it; returns `req`. */
export function handOnCheck(req: Request, check: Promise<OAuthCaller | BearerRefusal>): Request {
  checkedByDoor.set(req, check);
  return req;
}

/** The bearer check of `req`: the one the door made, else a fresh one. */
export function authenticateMcpRequest(
  deps: Pick<Deps, 'sql' | 'keyring' | 'config'>,
  req: Request,
): Promise<OAuthCaller | BearerRefusal> {
  return checkedByDoor.get(req) ?? authenticateMcp(deps, req.headers.get('authorization') ?? undefined);
}

const NEEDS_TOKEN =
  'this endpoint needs an OAuth access token (Authorization: Bearer); see resource_metadata';

function invalidToken(base: string): BearerRefusal {
  return {
    status: 401,
    challenge: bearerChallenge(base, 'invalid_token'),
    body: {
      error: 'invalid_token',
      error_description: 'the access token is invalid, expired, revoked or not for this server',
    },
  };
}
