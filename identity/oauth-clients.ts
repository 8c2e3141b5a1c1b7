// Dynamic client registration (RFC 7591) and client authentication at the token endpoint.
import { createHash } from 'node:crypto';
import type { Tx } from '../store/db.ts';
import { newId } from '../store/ids.ts';
import { countRegistrations, insertClient, type OAuthClientRow } from '../store/oauth.ts';
import { mintSecret, parseSecret, secretMatches } from '../store/secrets.ts';

export { AUTH_METHODS, checkMetadata, GRANT_TYPES, SUPPORTED_SCOPES } from './oauth-client-metadata.ts';

import { CimdRefused } from './cimd/errors.ts';
import { type ResolveDeps, resolveClient } from './cimd/resolve.ts';
import { checkMetadata } from './oauth-client-metadata.ts';
import { InvalidClient } from './oauth-errors.ts';

const CLIENT_SECRET_KIND = 'csocs';

/**
 * Registrations allowed per address and overall in a window (kept in the store: no memory
 * state). The per-address limit is what stops one party; the overall one only bounds the table's
 * growth, so it sits far above what many addresses together would register legitimately: at 10
 * per address, a flood needs a thousand addresses to close registration for everyone.
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
