// Dynamic client registration (RFC 7591) and client authentication at the token endpoint.
import { createHash } from 'node:crypto';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { countRegistrations, insertClient, type OAuthClientRow } from '../store/oauth.ts';
import { mintSecret, parseSecret, secretMatches } from '../store/secrets.ts';
import { CimdRefused } from './cimd/errors.ts';
import { type ResolveDeps, resolveClient } from './cimd/resolve.ts';
import { InvalidClient, InvalidClientMetadata, InvalidRedirectUri } from './oauth-errors.ts';
import { redirectUriProblem } from './oauth-redirect.ts';

export const SUPPORTED_SCOPES = ['mcp'] as const;
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const CLIENT_SECRET_KIND = 'csocs';
const EXTRA_FIELDS = [
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'software_id',
  'software_version',
  'application_type',
] as const;
/** OpenID Connect Dynamic Client Registration 1.0 §2 `application_type`; MCP 2026-07-28 asks for it. */
const APPLICATION_TYPES = ['native', 'web'];

/**
 * Registrations allowed per address and overall in a window (kept in the store: no memory
 * state). The per-address limit is what stops one party; the overall one only bounds the table's
 * growth, so it sits far above what many addresses together would register legitimately: at 10
 * per address, a flood needs a thousand addresses to close registration for everyone (issue 18.4).
 * IPv6 addresses count by their /64, which one party usually holds whole.
 */
export const REGISTRATION_LIMITS = { windowSeconds: 600, overall: 10_000 } as const;

export type RegistrationResponse = Record<string, string | number | string[]>;

/**
 * RFC 7591 §3.1-3.2: validates the metadata, registers the client and returns the 201 body.
 * Unknown fields are ignored (RFC 7591 §2: the server MUST ignore metadata it does not understand).
 */
export async function registerClient(
  sql: Tx,
  input: { metadata: unknown; address: string; perAddress: number },
): Promise<RegistrationResponse | 'rate_limited'> {
  const from = createHash('sha256').update(addressGroup(input.address)).digest('hex');
  const since = new Date(Date.now() - REGISTRATION_LIMITS.windowSeconds * 1000);
  if (
    (await countRegistrations(sql, from, since)) >= input.perAddress ||
    (await countRegistrations(sql, null, since)) >= REGISTRATION_LIMITS.overall
  ) {
    return 'rate_limited';
  }
  const m = checkMetadata(input.metadata);
  const id = newId('cli');
  const secret = m.token_endpoint_auth_method === 'none' ? null : mintSecret(CLIENT_SECRET_KIND, id);
  const row = await insertClient(sql, {
    id,
    ...m,
    secret_hash: secret?.hash ?? null,
    secret_expires_at: null,
    registered_from: from,
  });
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.created_at.getTime() / 1000),
    client_name: row.client_name,
    redirect_uris: row.redirect_uris,
    grant_types: row.grant_types,
    response_types: row.response_types,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    scope: row.scope,
    ...row.extra,
    // RFC 7591 §3.2.1: 0 means the secret does not expire.
    ...(secret ? { client_secret: secret.secret, client_secret_expires_at: 0 } : {}),
  };
}

type CheckedMetadata = Pick<
  OAuthClientRow,
  | 'client_name'
  | 'redirect_uris'
  | 'grant_types'
  | 'response_types'
  | 'token_endpoint_auth_method'
  | 'scope'
  | 'extra'
>;

/** RFC 7591 §2 field rules, with the defaults a client that omits a field gets. */
export function checkMetadata(raw: unknown): CheckedMetadata {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidClientMetadata('the body must be a JSON object of client metadata');
  }
  const m = raw as Record<string, unknown>;
  const redirectUris = stringArray(m.redirect_uris, 'redirect_uris');
  if (!redirectUris || redirectUris.length === 0) {
    throw new InvalidRedirectUri('redirect_uris must list at least one redirect URI');
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidRedirectUri(`redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`);
  }
  // DEVIATION: RFC 7591 §2 defaults grant_types to authorization_code only; this server's access
  // tokens live minutes, so a client that says nothing also gets refresh_token to stay connected.
  const grantTypes = stringArray(m.grant_types, 'grant_types') ?? ['authorization_code', 'refresh_token'];
  const badGrant = grantTypes.find((g) => !(GRANT_TYPES as readonly string[]).includes(g));
  if (badGrant) throw new InvalidClientMetadata(`grant type ${JSON.stringify(badGrant)} is not supported`);
  const responseTypes = stringArray(m.response_types, 'response_types') ?? ['code'];
  if (responseTypes.some((r) => r !== 'code'))
    throw new InvalidClientMetadata('only response type "code" is supported');
  // RFC 7591 §2.1: grant_types and response_types must agree.
  if (grantTypes.includes('authorization_code') !== responseTypes.includes('code')) {
    throw new InvalidClientMetadata('grant type authorization_code and response type code go together');
  }
  // RFC 7591 §2: the default authentication method is client_secret_basic.
  const method = m.token_endpoint_auth_method ?? 'client_secret_basic';
  if (typeof method !== 'string' || !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw new InvalidClientMetadata(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  if (m.scope !== undefined && typeof m.scope !== 'string')
    throw new InvalidClientMetadata('scope must be a string');
  // RFC 7591 §2: the server may replace the requested scope; unsupported values are dropped and
  // an empty result becomes the MCP scope, so clients asking for e.g. "openid mcp" still connect.
  const scopes = (m.scope ?? '')
    .split(' ')
    .filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s));
  const name =
    typeof m.client_name === 'string' && m.client_name.trim() !== ''
      ? m.client_name.trim()
      : 'Unnamed client';
  // Echoed back and shown nowhere else: every redirect URI still passes the same rules whatever
  // the type (a native app may use https, loopback and a private-use scheme together, as Cursor does).
  if (m.application_type !== undefined && !APPLICATION_TYPES.includes(m.application_type as string)) {
    throw new InvalidClientMetadata('application_type must be "native" or "web"');
  }
  const extra: Record<string, string> = {};
  for (const field of EXTRA_FIELDS) {
    const value = m[field];
    if (typeof value === 'string' && value.length <= 2000) extra[field] = value;
  }
  return {
    client_name: name.slice(0, 200),
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: responseTypes,
    token_endpoint_auth_method: method as OAuthClientRow['token_endpoint_auth_method'],
    scope: scopes.length > 0 ? [...new Set(scopes)].join(' ') : 'mcp',
    extra,
  };
}

function stringArray(value: unknown, field: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string') || value.length > 20) {
    const Err = field === 'redirect_uris' ? InvalidRedirectUri : InvalidClientMetadata;
    throw new Err(`${field} must be an array of at most 20 strings`);
  }
  return value as string[];
}

/** What the token and revocation endpoints received for client authentication. */
export interface ClientCredentials {
  /** The `Authorization` header, if any. */
  authorization: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
}

/**
 * Authenticates the client (RFC 6749 §2.3, OAuth 2.1 §2.4). A confidential client must present
 * its secret (HTTP Basic or in the body); a public client only identifies itself. `basic` in the
 * error tells the renderer to add `WWW-Authenticate: Basic` (RFC 6749 §5.2).
 */
export async function authenticateClient(
  deps: ResolveDeps,
  creds: ClientCredentials,
): Promise<OAuthClientRow> {
  const basic = parseBasic(creds.authorization);
  // OAuth 2.1 §2.4: a client MUST NOT use more than one authentication method per request.
  if (basic && creds.clientSecret !== undefined) {
    throw new InvalidClient('use one client authentication method', 'basic and post secret together');
  }
  const clientId = basic?.id ?? creds.clientId;
  const secret = basic?.secret ?? creds.clientSecret;
  if (!clientId) throw new InvalidClient('client authentication failed', 'no client_id');
  if (basic && creds.clientId !== undefined && creds.clientId !== basic.id) {
    throw new InvalidClient('client authentication failed', 'client_id differs from the Basic user');
  }
  const client = await clientNamed(deps, clientId);
  if (!client) throw new InvalidClient('client authentication failed', 'unknown client');
  if (client.secret_hash === null) {
    // A public client has no secret to present; one sending a secret is confused, not stronger.
    if (secret !== undefined && secret !== '')
      throw new InvalidClient('client authentication failed', 'public client sent a secret');
    return client;
  }
  // Secrets carry the client id (csocs_<ulid>_…); a secret of another shape cannot match.
  const parsed = secret ? parseSecret(secret) : null;
  if (
    !secret ||
    !parsed ||
    parsed.kind !== CLIENT_SECRET_KIND ||
    !secretMatches(secret, client.secret_hash)
  ) {
    throw new InvalidClient('client authentication failed', 'wrong or missing client secret');
  }
  return client;
}

/**
 * A metadata-document client is looked up the same way at the token and revocation endpoints: a
 * stale copy is fetched again, and a document that no longer validates is `invalid_client`
 * (draft-ietf-oauth-client-id-metadata-document-01 §4.3).
 */
async function clientNamed(deps: ResolveDeps, clientId: string): Promise<OAuthClientRow | null> {
  try {
    return await resolveClient(deps, clientId);
  } catch (err) {
    if (err instanceof CimdRefused)
      throw new InvalidClient('the client metadata document cannot be used', err.reason);
    throw err;
  }
}

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function parseBasic(header: string | undefined): { id: string; secret: string } | null {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidClient('malformed Basic credentials');
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    throw new InvalidClient('malformed Basic credentials');
  }
}

/** True when the header carried Basic credentials (the 401 then names the Basic scheme). */
export function triedBasic(header: string | undefined): boolean {
  return header !== undefined && /^Basic\s/i.test(header);
}

/** An IPv4 address as itself; an IPv6 address by its /64 (RFC 4291 §2.5.4 interface ids). */
export function addressGroup(address: string): string {
  const bare = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (!bare.includes(':')) return bare;
  const [head, tail = ''] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = bare.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
