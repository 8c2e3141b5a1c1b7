// Access tokens: ES256 JWTs in the RFC 9068 profile, audience-bound to the MCP resource.
import { createLocalJWKSet, type JWTVerifyGetKey, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { AiClientLimits } from '../audit/actors.ts';
import type { Config } from '../config/env.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Tx } from '../store/db.ts';
import { findGrantCaller, type OAuthGrantRow, touchGrant } from '../store/oauth.ts';
import { mcpResource } from './oauth-authorize.ts';
import type { UserPrincipal } from './principal.ts';
import { getSigningKey } from './signing-keys.ts';
import { noteUse } from './usage.ts';

type AccessDeps = { sql: Tx; keyring: Keyring; config: Pick<Config, 'baseUrl' | 'oauth'> };

/** RFC 9068 §2.1: access tokens are typed, so no other JWT of ours (x-service-jwt) passes as one. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

export interface AccessClaims {
  sub: string;
  client_id: string;
  grant_id: string;
  scope: string;
  /** Seconds since the epoch (RFC 7519 §4.1.4). */
  exp: number;
}

/** RFC 9068 §2.2 claims: iss, exp, aud, sub, client_id, iat, jti, scope (+ our grant id). */
export async function signAccessToken(
  deps: AccessDeps,
  input: { grant: OAuthGrantRow; clientId: string },
): Promise<string> {
  const key = await getSigningKey(deps);
  return new SignJWT({ client_id: input.clientId, scope: input.grant.scope, grant_id: input.grant.id })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: ACCESS_TOKEN_TYP })
    .setIssuer(deps.config.baseUrl)
    .setAudience(input.grant.resource)
    .setSubject(input.grant.user_id)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime(`${deps.config.oauth.accessTokenSeconds}s`)
    .sign(key.privateKey);
}

const keySets = new WeakMap<object, Promise<JWTVerifyGetKey>>();

function keySet(deps: AccessDeps): Promise<JWTVerifyGetKey> {
  let set = keySets.get(deps.sql);
  if (!set) {
    set = getSigningKey(deps).then((k) => createLocalJWKSet({ keys: [k.publicJwk] }));
    set.catch(() => keySets.delete(deps.sql));
    keySets.set(deps.sql, set);
  }
  return set;
}

/**
 * Verifies signature, algorithm, type, issuer and audience (RFC 9068 §4; MCP authorization
 * 2025-11-25 "Token Audience Binding and Validation": the server MUST reject tokens not issued
 * for it). Null when any check fails.
 */
export async function readAccessToken(
  deps: AccessDeps,
  token: string,
  options: { allowExpired?: boolean } = {},
): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, await keySet(deps), {
      algorithms: ['ES256'],
      typ: ACCESS_TOKEN_TYP,
      issuer: deps.config.baseUrl,
      audience: mcpResource(deps.config.baseUrl),
      // RFC 9068 §2.2: exp, iat and jti are REQUIRED in a JWT access token; one without a
      // lifetime would never expire.
      requiredClaims: ['exp', 'iat', 'jti'],
      ...(options.allowExpired ? { currentDate: new Date(0) } : {}),
    });
    const { sub, client_id, grant_id, scope, exp } = payload;
    if (
      typeof exp !== 'number' ||
      typeof sub !== 'string' ||
      typeof client_id !== 'string' ||
      typeof grant_id !== 'string' ||
      typeof scope !== 'string'
    ) {
      return null;
    }
    return { sub, client_id, grant_id, scope, exp };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
}

/**
 * Verified claims by token, kept until the token expires (verifying an ES256 signature
 * on every MCP call cost ~0.5 ms). Safe to cache: a signature and its claims cannot change, and
 * what can — the grant revoked, the person disabled, the client limited — is read from the store
 * on every request all the same (findGrantCaller, through the access cache that every such change
 * empties: store/access-cache.ts). Only valid tokens are kept, so garbage sent
 * by a stranger costs a verification each time rather than memory; the map is bounded.
 */
const verified = new Map<string, { claims: AccessClaims; expiresAt: number; sql: object }>();
const VERIFIED_LIMIT = 10_000;

async function verifiedClaims(deps: AccessDeps, token: string): Promise<AccessClaims | null> {
  const hit = verified.get(token);
  // Keyed by the token, checked against the store it was verified for (tests run several services).
  if (hit && hit.sql === deps.sql && hit.expiresAt > Date.now()) return hit.claims;
  if (hit) verified.delete(token);
  const claims = await readAccessToken(deps, token);
  if (!claims) return null;
  if (verified.size >= VERIFIED_LIMIT) {
    const now = Date.now();
    for (const [k, v] of verified) if (v.expiresAt <= now) verified.delete(k);
    if (verified.size >= VERIFIED_LIMIT) verified.delete(verified.keys().next().value as string);
  }
  verified.set(token, { claims, expiresAt: claims.exp * 1000, sql: deps.sql });
  return claims;
}

/** Who an MCP request acts as: the user, through one grant of one client. */
export interface OAuthCaller {
  principal: UserPrincipal;
  /** The client, with the organization's limits on it (governance/ai-clients.ts), read with the grant. */
  client: { id: string; name: string; limits: AiClientLimits };
  scopes: string[];
}

/**
 * Authenticates an MCP request's bearer token. Beyond the JWT checks, the grant must still
 * be active and the user enabled: revoking a client, or disabling the user, takes effect on
 * the next request rather than when the token expires.
 */
export async function authenticateAccessToken(deps: AccessDeps, token: string): Promise<OAuthCaller | null> {
  const claims = await verifiedClaims(deps, token);
  if (!claims) return null;
  const row = await findGrantCaller(deps.sql, claims.grant_id);
  if (!row || row.revoked_at !== null || row.user_id !== claims.sub || row.client_id !== claims.client_id)
    return null;
  // A disabled user's credentials stop working on their next request (identity/authenticate.ts).
  if (row.disabled_at !== null) return null;
  noteUse(deps.sql, 'grant', row.grant_id, row.last_used_at, touchGrant);
  const principal: UserPrincipal = {
    kind: 'user',
    orgId: row.org_id,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    via: 'oauth',
    credentialId: row.grant_id,
  };
  return {
    principal,
    client: {
      id: row.client_id,
      name: row.client_name,
      limits: { disabled: row.client_disabled, databaseIds: row.client_database_ids },
    },
    scopes: claims.scope.split(' '),
  };
}
