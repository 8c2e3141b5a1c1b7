// Dynamic registration as real clients send it: Cursor (a private-use scheme, an https and a
// loopback callback in one request, application_type native) and ChatGPT (a per-connector https
// callback, registration and token calls from its web origin under CORS). Each ends in tokens that
// list the MCP tools and run a query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTable, listToolsAndQuery, registerDatabase } from '../mcp/target.ts';
import { Browser, connect, type Discovered, discover } from './flow.ts';

let svc: TestService;
let d: Discovered;
let db: { id: string };
const TABLE = `oauth_shapes_${Date.now()}`;
const CHATGPT = 'https://chatgpt.com';

beforeAll(async () => {
  svc = await startTestService();
  d = await discover(svc);
  await createTable(TABLE, 2);
  db = await registerDatabase(svc, { name: 'shapes' });
});
afterAll(async () => svc?.stop());

/** The query each shape ends with, over both protocol revisions (test/mcp/target.ts). */
const countRows = () => ({ databaseId: db.id, sql: `select count(*)::int as n from ${TABLE}`, rows: [[2]] });

describe('Cursor: DCR with cursor://, https and loopback redirects in one request', () => {
  const CURSOR = 'cursor://anysphere.cursor-mcp/oauth/callback';

  it('registers with application_type native, echoes it, and connects through the cursor:// redirect', async () => {
    // Raw JSON: the SDK's response schema would drop application_type before the test saw it.
    const res = await svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Cursor',
        redirect_uris: [CURSOR, 'https://cursor.com/oauth/callback', 'http://127.0.0.1:6274/oauth/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
    });
    expect(res.status).toBe(201);
    const client = await res.json();
    expect(client).toMatchObject({ application_type: 'native', token_endpoint_auth_method: 'none' });
    expect(client.redirect_uris).toHaveLength(3);

    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const page = await browser.fetch(
      `${svc.url}/oauth/authorize?${new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: CURSOR,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
    );
    const html = await page.text();
    // A registered client's name is its own claim: always marked, never given a host.
    expect(html).toContain('(unverified name)');
    expect(html).toContain('cursor://anysphere.cursor-mcp (an application on this computer)');

    const { tokens } = await connect(svc, svc.admin, { browser, discovered: d, client, redirect: CURSOR });
    await listToolsAndQuery(svc, tokens.access_token, countRows());
  });

  it('refuses an application_type other than native or web', async () => {
    const res = await svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CURSOR], application_type: 'desktop' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('ChatGPT: per-connector https callback, CORS from its origin', () => {
  it('answers preflights of metadata, registration, token and revocation for the requested headers', async () => {
    for (const [path, method] of [
      ['/.well-known/oauth-authorization-server', 'GET'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET'],
      ['/oauth/register', 'POST'],
      ['/oauth/token', 'POST'],
      ['/oauth/revoke', 'POST'],
    ] as const) {
      const res = await svc.fetch(path, {
        method: 'OPTIONS',
        headers: {
          origin: CHATGPT,
          'access-control-request-method': method,
          'access-control-request-headers':
            'authorization, content-type, mcp-protocol-version, x-openai-session',
        },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('access-control-allow-methods'), path).toContain(method);
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      for (const h of ['authorization', 'content-type', 'mcp-protocol-version', 'x-openai-session'])
        expect(allowed, `${path} ${h}`).toContain(h);
      // No cookies travel with these calls: credentials are never allowed.
      expect(res.headers.get('access-control-allow-credentials'), path).toBeNull();
    }
  });

  it('registers and exchanges from the ChatGPT origin, each answer readable there', async () => {
    const callback = 'https://chatgpt.com/connector_platform_oauth_redirect';
    const reg = await svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { origin: CHATGPT, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'ChatGPT',
        redirect_uris: [callback],
        token_endpoint_auth_method: 'none',
        application_type: 'web',
      }),
    });
    expect(reg.status).toBe(201);
    expect(reg.headers.get('access-control-allow-origin')).toBe('*');
    const client = await reg.json();
    expect(client.application_type).toBe('web');

    // The SDK's token calls run in Node; the same exchange from the browser origin is checked below.
    const { tokens } = await connect(svc, svc.admin, { discovered: d, client, redirect: callback });
    await listToolsAndQuery(svc, tokens.access_token, countRows());

    const refresh = await svc.fetch('/oauth/token', {
      method: 'POST',
      headers: { origin: CHATGPT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: client.client_id,
      }),
    });
    expect(refresh.status).toBe(200);
    expect(refresh.headers.get('access-control-allow-origin')).toBe('*');
    const next = await refresh.json();
    const revoke = await svc.fetch('/oauth/revoke', {
      method: 'POST',
      headers: { origin: CHATGPT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: next.refresh_token, client_id: client.client_id }),
    });
    expect(revoke.status).toBe(200);
    expect(revoke.headers.get('access-control-allow-origin')).toBe('*');
    // An error answer is readable from the origin too (the client must see invalid_grant).
    const reused = await svc.fetch('/oauth/token', {
      method: 'POST',
      headers: { origin: CHATGPT, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: next.refresh_token,
        client_id: client.client_id,
      }),
    });
    expect(reused.status).toBe(400);
    expect(reused.headers.get('access-control-allow-origin')).toBe('*');
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
