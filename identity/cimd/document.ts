// The rules of draft-ietf-oauth-client-id-metadata-document-01 that need no network: which
// client_id values are metadata-document URLs, what a document must say, how long a copy is
// used, and how much of its self-description the consent screen can vouch for.
import { checkMetadata } from '../oauth-client-metadata.ts';
import { OAuthError } from '../oauth-errors.ts';
import { CimdRefused } from './errors.ts';

/** Cache lifetime bounds (draft -01 §4.4 lets the server bound what HTTP caching asks for). */
export const CACHE_SECONDS = { default: 600, floor: 60, ceiling: 86_400 } as const;

/**
 * True when a client_id is URL-shaped and so can only be a metadata-document client: registered
 * ids are `cli_<ULID>` and never contain a colon.
 */
export function isUrlClientId(clientId: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(clientId);
}

/**
 * draft -01 §3: the client_id URL uses https, has a path component, no dot segments, no fragment,
 * no user info. It must also be in the canonical form a URL parser gives back, because the
 * document's client_id is compared to it as a plain string (§4.1) and the URL is the client's key.
 */
export function checkClientIdUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new CimdRefused('its address is not a valid URL', 'unparsable client_id URL');
  }
  if (url.protocol !== 'https:') throw new CimdRefused('its address does not use https', 'non-https');
  if (clientId.length > 2000) throw new CimdRefused('its address is too long', 'client_id too long');
  if (url.username !== '' || url.password !== '' || clientId.includes('@'))
    throw new CimdRefused('its address contains user information', 'user info in client_id');
  if (clientId.includes('#')) throw new CimdRefused('its address contains a fragment', 'fragment');
  if (url.pathname === '/' || url.pathname === '')
    throw new CimdRefused('its address has no path', 'no path component');
  if (url.href !== clientId || /\/\.\.?(\/|$)|%2e/i.test(clientId))
    throw new CimdRefused('its address is not in canonical form', 'non-canonical client_id URL');
  return url;
}

/** The client fields a validated document supplies (the same shape registration stores). */
export type DocumentClient = ReturnType<typeof checkMetadata>;

/**
 * draft -01 §4.1: the document is client metadata (RFC 7591 §2) whose client_id equals the URL
 * it was fetched from; it cannot carry a shared secret or a secret-based authentication method.
 * This server accepts only public metadata-document clients (`none`), which must use PKCE anyway.
 */
export function checkDocument(clientId: string, body: unknown): DocumentClient {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new CimdRefused('it is not a JSON object', 'not an object');
  const doc = body as Record<string, unknown>;
  if (doc.client_id !== clientId)
    throw new CimdRefused('its client_id is not its own address', 'client_id differs from the URL');
  if (doc.client_secret !== undefined || doc.client_secret_expires_at !== undefined)
    throw new CimdRefused('it contains a client secret', 'client_secret present');
  const method = doc.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw new CimdRefused(
      'it asks for a token endpoint authentication method other than "none"',
      `token_endpoint_auth_method ${String(method).slice(0, 50)}`,
    );
  if (doc.redirect_uris === undefined)
    throw new CimdRefused('it lists no redirect_uris', 'redirect_uris missing');
  try {
    return checkMetadata({ ...doc, token_endpoint_auth_method: 'none' });
  } catch (err) {
    if (err instanceof OAuthError) throw new CimdRefused(`it is invalid: ${err.description}`, err.reason);
    throw err;
  }
}

/**
 * How long a fetched copy is used before fetching again, from Cache-Control (draft -01 §4.4:
 * "SHOULD respect HTTP cache headers"). no-store, no-cache and max-age=0 mean every use fetches;
 * a positive max-age is held between a floor (bounds how often a client can make us fetch) and a
 * ceiling (a changed or withdrawn document takes effect within a day).
 */
export function cacheSeconds(cacheControl: string | null): number {
  if (cacheControl === null) return CACHE_SECONDS.default;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find(Boolean);
  if (!maxAge) return CACHE_SECONDS.default;
  const seconds = Number(maxAge[1]);
  if (seconds === 0) return 0;
  return Math.min(Math.max(seconds, CACHE_SECONDS.floor), CACHE_SECONDS.ceiling);
}

/**
 * What the consent screen can say about who the client is. A metadata-document client is vouched
 * for by the host that served its document over https; its name is still its own claim, so the
 * name is marked unverified when it names a domain other than that host (draft -01 §6.2 warns of
 * impersonation through client_name). A registered client's name is self-asserted: always
 * unverified, and it has no host.
 */
export function clientIdentity(client: { id: string; kind: 'dcr' | 'cimd'; client_name: string }): {
  name: string;
  host: string | null;
  nameUnverified: boolean;
} {
  if (client.kind !== 'cimd') return { name: client.client_name, host: null, nameUnverified: true };
  const host = new URL(client.id).hostname.toLowerCase();
  const claimed = client.client_name.toLowerCase().match(/(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}/g);
  const related = (domain: string) =>
    domain === host || host.endsWith(`.${domain}`) || domain.endsWith(`.${host}`);
  return {
    name: client.client_name,
    host,
    nameUnverified: (claimed ?? []).some((domain) => !related(domain)),
  };
}
