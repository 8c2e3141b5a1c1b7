// Client ID Metadata Documents as real clients use them: Claude Code (an https client_id URL,
// redirect http://localhost:<port>/callback) and VS Code (http://127.0.0.1:33418, then another
// random loopback port), each ending in tokens that list the MCP tools and run a query.
import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTable, listToolsAndQuery, registerDatabase } from '../mcp/target.ts';
import { type MetadataHost, startMetadataHost } from './cimd-host.ts';
import { Browser, connect, type Discovered, discover, formFields, mcpStatusOf } from './flow.ts';

let svc: TestService;
let host: MetadataHost;
let d: Discovered;
let db: { id: string };
const TABLE = `oauth_cimd_${Date.now()}`;

beforeAll(async () => {
  host = await startMetadataHost();
  svc = await startTestService({
    env: { OAUTH_CIMD_ALLOW_HOSTS: `localhost:${host.port}`, OAUTH_CIMD_CA_FILE: host.caFile },
  });
  d = await discover(svc);
  await createTable(TABLE, 3);
  db = await registerDatabase(svc, { name: 'cimd' });
});
afterAll(async () => {
  await svc?.stop();
  await host?.stop();
});

/** The query each shape ends with, over both protocol revisions (test/mcp/target.ts). */
const nameOf3 = () => ({
  databaseId: db.id,
  sql: `select name from ${TABLE} where id = $1`,
  params: [3],
  rows: [['name 3']],
});

/** What an MCP client knows of itself when its client_id is its document's URL (no registration). */
const cimdClient = (clientId: string): OAuthClientInformationFull =>
  ({ client_id: clientId, redirect_uris: [] }) as unknown as OAuthClientInformationFull;

describe('authorization-server metadata', () => {
  it('advertises client ID metadata documents, with none among the token endpoint methods', async () => {
    const m = await (await svc.fetch('/.well-known/oauth-authorization-server')).json();
    expect(m.client_id_metadata_document_supported).toBe(true);
    expect(m.token_endpoint_auth_methods_supported).toContain('none');
    expect(m.registration_endpoint).toBe(`${svc.url}/oauth/register`);
  });
});

describe('Claude Code shape: https client_id, http://localhost:<port>/callback', () => {
  it('fetches the document, shows its name and host, issues tokens that list tools and run a query', async () => {
    const clientId = host.route('/oauth/claude-code-client-metadata', {
      headers: { 'cache-control': 'public, max-age=3600' },
      body: {
        client_id: `${host.origin}/oauth/claude-code-client-metadata`,
        client_name: 'Claude Code',
        client_uri: 'https://claude.ai',
        redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    const redirect = 'http://localhost:54545/callback';
    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const consent = await browser.fetch(
      `${svc.url}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
    );
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('Claude Code');
    expect(html).toContain('published by <strong class="client-host">localhost</strong>');
    expect(html).not.toContain('unverified name');
    expect(html).toContain('Access lasts until you disconnect it');
    expect(formFields(html).client_id).toBe(clientId);

    const { tokens, client } = await connect(svc, svc.admin, {
      browser,
      discovered: d,
      client: cimdClient(clientId),
      redirect,
    });
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    expect(claims.client_id).toBe(clientId);
    const refreshed = await refreshAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token!,
      resource: new URL(d.resource),
    });
    await listToolsAndQuery(svc, refreshed.access_token, nameOf3());

    // max-age=3600: the consent page, the decision, the token and refresh calls used one fetch.
    expect(host.hits.get('/oauth/claude-code-client-metadata')).toBe(1);
    const [row] = await svc.deps.sql<{ kind: string; client_name: string; secret_hash: string | null }[]>`
      select kind, client_name, secret_hash from oauth_clients where id = ${clientId}`;
    expect(row).toEqual({ kind: 'cimd', client_name: 'Claude Code', secret_hash: null });
    const audit = await svc.deps.sql<{ ai_client_name: string }[]>`
      select ai_client_name from audit_log where statement like ${`select name from ${TABLE}%`}`;
    expect(audit.map((a) => a.ai_client_name)).toContain('Claude Code');

    // Connected AI clients lists it with the host that publishes it.
    const list = await (await browser.fetch(`${svc.url}/oauth/connections`)).text();
    expect(list).toContain('Claude Code');
    expect(list).toContain(`(localhost:${host.port})`);
    const settings = await (await browser.fetch(`${svc.url}/settings`)).text();
    expect(settings).toContain('Claude Code');

    // Revocation (RFC 7009) authenticates the metadata-document client like the token endpoint.
    const revoke = await svc.fetch('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshed.refresh_token!, client_id: clientId }),
    });
    expect(revoke.status).toBe(200);
    expect((await mcpStatusOf(svc, refreshed.access_token)).status).toBe(401);
    const logs = svc.logs.join('');
    for (const secret of [tokens.access_token, tokens.refresh_token!, refreshed.refresh_token!])
      expect(logs).not.toContain(secret);
  });
});

describe('VS Code shape: http://127.0.0.1:33418, then a random loopback port', () => {
  it('connects on both ports, asking again on the new one; a name claiming another site is marked', async () => {
    const clientId = host.route('/vscode/client.json', {
      headers: { 'cache-control': 'no-store' },
      body: {
        client_id: `${host.origin}/vscode/client.json`,
        client_name: 'Visual Studio Code (vscode.dev)',
        redirect_uris: ['http://127.0.0.1:33418', 'https://vscode.dev/redirect'],
        application_type: 'native',
      },
    });
    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const first = await connect(svc, svc.admin, {
      browser,
      discovered: d,
      client: cimdClient(clientId),
      redirect: 'http://127.0.0.1:33418',
    });
    await listToolsAndQuery(svc, first.tokens.access_token, nameOf3());

    const params = (redirect: string) =>
      `${svc.url}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`;
    // Another port: the person is asked again (any local process can listen on a port).
    const page = await browser.fetch(params('http://127.0.0.1:61234'));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Visual Studio Code (vscode.dev)');
    expect(html).toContain('(unverified name)');
    const second = await connect(svc, svc.admin, {
      browser,
      discovered: d,
      client: cimdClient(clientId),
      redirect: 'http://127.0.0.1:61234',
    });
    await listToolsAndQuery(svc, second.tokens.access_token, nameOf3());

    // no-store: every use fetched the document again (none of it was served from the copy).
    expect(host.hits.get('/vscode/client.json')!).toBeGreaterThanOrEqual(5);
    const consents = await svc.deps.sql<{ redirect_uri: string }[]>`
      select redirect_uri from oauth_consents where client_id = ${clientId} order by redirect_uri`;
    expect(consents.map((c) => c.redirect_uri)).toEqual(['http://127.0.0.1:33418', 'http://127.0.0.1:61234']);
  });

  it('a document that drops a redirect URI takes effect at the next fetch', async () => {
    const path = '/vscode/changing.json';
    const clientId = `${host.origin}${path}`;
    const doc = (redirects: string[]) => ({
      headers: { 'cache-control': 'no-cache' },
      body: { client_id: clientId, client_name: 'Changing', redirect_uris: redirects },
    });
    host.route(path, doc(['http://127.0.0.1:33418', 'https://vscode.dev/redirect']));
    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const url = `${svc.url}/oauth/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: 'https://vscode.dev/redirect',
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    })}`;
    expect((await browser.fetch(url)).status).toBe(200);
    host.route(path, doc(['http://127.0.0.1:33418']));
    const again = await browser.fetch(url);
    expect(again.status).toBe(400);
    expect(again.headers.get('location')).toBeNull();
  });
});
