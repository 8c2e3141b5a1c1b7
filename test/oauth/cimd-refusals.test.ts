// Metadata documents that must not be used (draft-ietf-oauth-client-id-metadata-document-01
// §3, §4.1, §6.5, §6.6): each is an error page at the authorization endpoint (never a redirect to
// an unverified redirect URI), invalid_client at the token endpoint, and leaves nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type MetadataHost, type Route, startMetadataHost } from './cimd-host.ts';
import { Browser, tokenRequest } from './flow.ts';

let svc: TestService;
let strict: TestService;
let untrusting: TestService;
let limited: TestService;
let host: MetadataHost;
let browser: Browser;

beforeAll(async () => {
  host = await startMetadataHost();
  [svc, strict, untrusting, limited] = await Promise.all([
    startTestService({
      // Only the metadata-document exemption: loopback stays refused for everything else.
      env: {
        OAUTH_CIMD_ALLOW_HOSTS: `localhost:${host.port}`,
        OAUTH_CIMD_CA_FILE: host.caFile,
        COUNTERSIGN_OUTBOUND_ALLOW: '',
      },
    }),
    // Production defaults: no host exempt from the address check.
    startTestService({ env: { OAUTH_CIMD_CA_FILE: host.caFile, COUNTERSIGN_OUTBOUND_ALLOW: '' } }),
    // localhost reachable, but the test CA not trusted: TLS verification must refuse the host.
    startTestService({
      env: { OAUTH_CIMD_ALLOW_HOSTS: `localhost:${host.port}`, COUNTERSIGN_OUTBOUND_ALLOW: '' },
    }),
    // Two fetches per address per window.
    startTestService({
      env: {
        OAUTH_CIMD_ALLOW_HOSTS: `localhost:${host.port}`,
        OAUTH_CIMD_CA_FILE: host.caFile,
        OAUTH_CIMD_FETCHES_PER_ADDRESS: '2',
      },
    }),
  ]);
  browser = new Browser(svc);
  await browser.signIn('/', svc.admin.email, svc.admin.password);
});
afterAll(async () => {
  await Promise.all([svc?.stop(), strict?.stop(), untrusting?.stop(), limited?.stop()]);
  await host?.stop();
});

const REDIRECT = 'http://localhost:40000/callback';

/** A valid document for `path`, with overrides. */
function doc(path: string, over: Record<string, unknown> = {}): unknown {
  return { client_id: `${host.origin}${path}`, client_name: 'Refused', redirect_uris: [REDIRECT], ...over };
}

function authorizeUrl(
  service: TestService,
  clientId: string,
  redirect = REDIRECT,
  over: Record<string, string> = {},
): string {
  return `${service.url}/oauth/authorize?${new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirect,
    response_type: 'code',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 's',
    ...over,
  })}`;
}

/** Rows of every oauth table that name this client. */
async function storedFor(service: TestService, clientId: string) {
  const [row] = await service.deps.sql<Record<string, number>[]>`
    select (select count(*)::int from oauth_clients where id = ${clientId}) as clients,
      (select count(*)::int from oauth_codes where client_id = ${clientId}) as codes,
      (select count(*)::int from oauth_grants where client_id = ${clientId}) as grants,
      (select count(*)::int from oauth_consents where client_id = ${clientId}) as consents`;
  return row;
}
const NOTHING = { clients: 0, codes: 0, grants: 0, consents: 0 };

/** The authorize page for a refused document: 400, no redirect, the reason shown; then the token endpoint. */
async function expectRefused(clientId: string, why: RegExp, service = svc, b = browser): Promise<void> {
  const res = await b.fetch(authorizeUrl(service, clientId));
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  const html = await res.text();
  expect(html).toContain('metadata document cannot be used');
  expect(html).toMatch(why);
  const token = await tokenRequest(service, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: 'csoac_01JB00000000000000000000000_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    code_verifier: 'v'.repeat(43),
    redirect_uri: REDIRECT,
  });
  expect(token.status).toBe(401);
  expect(await token.json()).toMatchObject({ error: 'invalid_client' });
  expect(await storedFor(service, clientId)).toEqual(NOTHING);
}

const serve = (path: string, route: Route) => host.route(path, route);

describe('refused documents', () => {
  it('a document whose client_id is not its own URL', async () => {
    const id = serve('/mismatch.json', { body: doc('/other.json') });
    await expectRefused(id, /client_id is not its own address/);
  });

  it('a redirect URI the document does not list: error page, no code, consent or grant', async () => {
    const id = serve('/listed.json', { body: doc('/listed.json') });
    const res = await browser.fetch(authorizeUrl(svc, id, 'https://attacker.example/callback'));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('did not register');
    // The document itself was valid and is kept as the client's description; nothing was granted.
    expect(await storedFor(svc, id)).toEqual({ ...NOTHING, clients: 1 });
  });

  it('a document on a loopback address when no host is exempt (production default)', async () => {
    const id = serve('/private.json', { body: doc('/private.json') });
    const b = new Browser(strict);
    await b.signIn('/', strict.admin.email, strict.admin.password);
    await expectRefused(id, /not on the public internet/, strict, b);
    expect(host.hits.get('/private.json')).toBeUndefined();
  });

  it('a document whose certificate no trusted CA signed', async () => {
    const id = serve('/untrusted.json', { body: doc('/untrusted.json') });
    const b = new Browser(untrusting);
    await b.signIn('/', untrusting.admin.email, untrusting.admin.password);
    await expectRefused(id, /could not be reached over https/, untrusting, b);
  });

  it('an IP literal on loopback, even when the host name localhost is exempt', async () => {
    serve('/literal.json', { body: doc('/literal.json') });
    await expectRefused(`https://127.0.0.1:${host.port}/literal.json`, /not on the public internet/);
    expect(host.hits.get('/literal.json')).toBeUndefined();
  });

  it('a document larger than 5 KB, sent without content-length', async () => {
    const id = serve('/big.json', {
      chunked: true,
      body: doc('/big.json', { client_uri: 'https://example.com/', software_id: 'x'.repeat(6000) }),
    });
    await expectRefused(id, /larger than 5 KB/);
  });

  it('a document that takes longer than 5 seconds', async () => {
    const id = serve('/slow.json', { delayMs: 6500, body: doc('/slow.json') });
    const started = Date.now();
    const res = await browser.fetch(authorizeUrl(svc, id));
    expect(Date.now() - started).toBeLessThan(6400);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/did not answer within 5 seconds/);
    expect(await storedFor(svc, id)).toEqual(NOTHING);
  }, 20_000);

  it('an http (not https) client_id URL: nothing is fetched', async () => {
    serve('/plain.json', { body: doc('/plain.json') });
    await expectRefused(`http://localhost:${host.port}/plain.json`, /does not use https/);
    expect(host.hits.get('/plain.json')).toBeUndefined();
  });

  it('a redirect from the document URL is not followed', async () => {
    serve('/target.json', { body: doc('/moved.json') });
    const id = serve('/moved.json', { status: 302, headers: { location: `${host.origin}/target.json` } });
    await expectRefused(id, /answered with a redirect/);
    expect(host.hits.get('/target.json')).toBeUndefined();
  });

  it('a document not served as application/json, or asking for a client secret', async () => {
    const html = serve('/html.json', { headers: { 'content-type': 'text/html' }, body: doc('/html.json') });
    await expectRefused(html, /not served as application\/json/);
    const secret = serve('/secret.json', {
      body: doc('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' }),
    });
    await expectRefused(secret, /authentication method other than/);
  });

  it('a document without redirect_uris, and client_id URLs with a fragment or no path', async () => {
    const bare = serve('/bare.json', { body: { client_id: `${host.origin}/bare.json`, client_name: 'x' } });
    await expectRefused(bare, /lists no redirect_uris/);
    await expectRefused(`${host.origin}/bare.json#x`, /fragment/);
    await expectRefused(`${host.origin}/`, /no path/);
  });
});

// An anonymous GET /oauth/authorize makes the server fetch a URL: only for a request that could
// succeed, and only so often per address (draft-ietf-oauth-client-id-metadata-document-01 §6.5).
describe('what an anonymous request can make the server fetch', () => {
  it('nothing, when the request fails a check that needs no client', async () => {
    const id = serve('/cheap.json', { body: doc('/cheap.json') });
    const wrong: Record<string, string>[] = [
      { response_type: 'token' },
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
      { redirect_uri: 'not a uri' },
      { resource: 'https://elsewhere.example/mcp' },
    ];
    for (const over of wrong) {
      const res = await fetch(authorizeUrl(svc, id, REDIRECT, over), { redirect: 'manual' });
      expect(res.status, JSON.stringify(over)).toBe(400);
      expect(await res.text()).toContain('The request is not valid');
    }
    expect(host.hits.get('/cheap.json')).toBeUndefined();
    expect(await storedFor(svc, id)).toEqual(NOTHING);
  });

  it('a limited number of documents per address; a stored document costs nothing', async () => {
    const ids = ['/l1.json', '/l2.json', '/l3.json'].map((p) => serve(p, { body: doc(p) }));
    const authorize = (id: string) => fetch(authorizeUrl(limited, id), { redirect: 'manual' });
    // A usable document: the next step is signing in.
    for (const id of ids.slice(0, 2)) expect((await authorize(id)).status).toBe(302);
    expect((await authorize(ids[0]!)).status).toBe(302);
    const third = await authorize(ids[2]!);
    expect(third.status).toBe(400);
    expect(await third.text()).toMatch(/too many metadata documents/);
    expect(host.hits.get('/l1.json')).toBe(1);
    expect(host.hits.get('/l3.json')).toBeUndefined();
  });
});
