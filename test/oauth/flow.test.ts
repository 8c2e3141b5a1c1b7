import { refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { callTool, createTable, mcpClient, registerDatabase } from '../mcp/target.ts';
import { Browser, connect, discover, formFields, REDIRECT, register } from './flow.ts';

let svc: TestService;
const TABLE = `oauth_flow_${Date.now()}`;
beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 3);
});
afterAll(async () => svc?.stop());

describe('metadata (RFC 9728, RFC 8414)', () => {
  it('serves protected-resource metadata at the root and at the /mcp path, from BASE_URL', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await svc.fetch(path, { headers: { origin: 'https://client.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual({
        resource: `${svc.url}/mcp`,
        authorization_servers: [svc.url],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
        resource_name: 'Countersign',
      });
    }
  });

  it('serves authorization-server metadata with the SPEC.md fields, revocation and RFC 9207', async () => {
    const res = await svc.fetch('/.well-known/oauth-authorization-server');
    const m = await res.json();
    expect(m).toMatchObject({
      issuer: svc.url,
      authorization_endpoint: `${svc.url}/oauth/authorize`,
      token_endpoint: `${svc.url}/oauth/token`,
      registration_endpoint: `${svc.url}/oauth/register`,
      revocation_endpoint: `${svc.url}/oauth/revoke`,
      jwks_uri: `${svc.url}/.well-known/jwks.json`,
      scopes_supported: ['mcp'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = await (await svc.fetch('/.well-known/jwks.json')).json();
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('answers CORS preflights on registration and token, exposing WWW-Authenticate', async () => {
    for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke']) {
      const res = await svc.fetch(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://client.example', 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    const res = await svc.fetch('/oauth/token', {
      method: 'POST',
      headers: { origin: 'https://client.example' },
    });
    expect(res.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/i);
  });
});

describe('the whole flow with the MCP SDK client auth functions', () => {
  it('discovers, registers, authorizes with PKCE, signs in, consents, exchanges, refreshes, then uses /mcp', async () => {
    const unauth = await svc.fetch('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
    );

    const { tokens, client, discovered } = await connect(svc, svc.admin);
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.scope).toBe('mcp');
    expect(tokens.expires_in).toBe(600);
    const [, payload] = tokens.access_token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    expect(claims).toMatchObject({
      iss: svc.url,
      aud: `${svc.url}/mcp`,
      scope: 'mcp',
      client_id: client.client_id,
    });
    expect(JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString())).toMatchObject(
      {
        alg: 'ES256',
        typ: 'at+jwt',
      },
    );

    const refreshed = await refreshAuthorization(discovered.issuer, {
      metadata: discovered.metadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token!,
      resource: new URL(discovered.resource),
    });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    const db = await registerDatabase(svc, { name: 'flow' });
    const mcp = await mcpClient(svc, refreshed.access_token);
    expect(mcp.getServerVersion()?.name).toBe('countersign');
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'list_databases',
      'get_database_schema',
      'search_schema',
      'sample_table',
      'run_query',
      'get_query_request',
      'cancel_query',
      'get_data_protection',
      'query_history',
    ]);
    const out = await callTool(mcp, 'run_query', {
      database_id: db.id,
      sql: `select name from ${TABLE} where id = $1`,
      params: [2],
    });
    expect(out.isError).toBe(false);
    expect(out.data).toMatchObject({
      status: 'executed',
      columns: ['name'],
      rows: [['name 2']],
      num_rows: 1,
    });
    await mcp.close();

    // The query is in the audit log as AI-originated, naming the client.
    const audit = await svc.deps.sql<{ origin: string; ai_client_name: string; statement: string }[]>`
      select origin, ai_client_name, statement from audit_log where statement like ${`select name from ${TABLE}%`}`;
    expect(audit).toEqual([
      {
        origin: 'ai',
        ai_client_name: 'Test AI client',
        statement: `select name from ${TABLE} where id = $1`,
      },
    ]);

    // No token, refresh token or password reaches a log line.
    const logs = svc.logs.join('');
    for (const secret of [
      tokens.access_token,
      tokens.refresh_token!,
      refreshed.access_token,
      refreshed.refresh_token!,
      svc.admin.password,
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});

describe('consent', () => {
  it('names the client and the redirect host, refuses framing, and is remembered per user and client', async () => {
    const d = await discover(svc);
    const client = await register(d, { client_name: 'Remembered Client' });
    const browser = new Browser(svc);
    const login = await browser.signIn('/', svc.admin.email, svc.admin.password);
    expect(login.status).toBe(303);
    const url = `${svc.url}/oauth/authorize?${new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'xyz',
    })}`;
    const page = await browser.fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('Remembered Client');
    expect(html).toContain('127.0.0.1 (this computer)');
    const fields = formFields(html);
    expect(fields.csrf).toBeTruthy();

    // A POST without the CSRF token is refused.
    const { csrf: _drop, ...noCsrf } = fields;
    const forged = await browser.fetch(`${svc.url}/oauth/authorize`, {
      method: 'POST',
      body: new URLSearchParams({ ...noCsrf, decision: 'approve' }),
    });
    expect(forged.status).toBe(403);

    const approved = await browser.fetch(`${svc.url}/oauth/authorize`, {
      method: 'POST',
      body: new URLSearchParams({ ...fields, decision: 'approve' }),
    });
    expect(approved.status).toBe(303);
    const back = new URL(approved.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(back.searchParams.get('iss')).toBe(svc.url);
    expect(back.searchParams.get('code')).toMatch(/^csoac_/);

    // Second time: no screen, straight back with a code.
    const again = await browser.fetch(url);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toMatch(/^csoac_/);
  });

  it('a denial goes back to the client as access_denied with state and iss', async () => {
    const d = await discover(svc);
    const client = await register(d, { client_name: 'Denied Client' });
    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const page = await browser.fetch(
      `${svc.url}/oauth/authorize?${new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 's1',
      })}`,
    );
    const res = await browser.fetch(`${svc.url}/oauth/authorize`, {
      method: 'POST',
      body: new URLSearchParams({ ...formFields(await page.text()), decision: 'deny' }),
    });
    expect(res.status).toBe(303);
    const back = new URL(res.headers.get('location')!);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: 'access_denied',
      state: 's1',
      iss: svc.url,
    });
  });
});

describe('connected clients page', () => {
  it('lists the client and disconnecting it stops its tokens on the next MCP request', async () => {
    const { tokens, browser } = await connect(svc, svc.admin);
    const mcp = await mcpClient(svc, tokens.access_token);
    await mcp.listTools();
    const page = await browser.fetch(`${svc.url}/oauth/connections`);
    const html = await page.text();
    expect(html).toContain('Test AI client');
    const grantIds = [...html.matchAll(/action="\/oauth\/connections\/(ogr_[0-9A-Z]+)\/revoke"/g)].map(
      (m) => m[1]!,
    );
    const csrf = formFields(html).csrf!;
    const [grant] = await svc.deps.sql<{ grant_id: string }[]>`
      select (claims->>'grant_id') as grant_id from (select ${JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString())}::jsonb as claims) t`;
    expect(grantIds).toContain(grant!.grant_id);
    const res = await browser.fetch(`${svc.url}/oauth/connections/${grant!.grant_id}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ csrf }),
    });
    expect(res.status).toBe(303);
    await expect(mcp.listTools()).rejects.toThrow();
    const raw = await svc.fetch('/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
