// Tokens at /mcp, revocation, registration and the token endpoint's basics.
import { exchangeAuthorization, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSigningKey, signServiceJwt } from '../../identity/signing-keys.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { mcpClient } from '../mcp/target.ts';
import { connect, type Discovered, discover, mcpStatusOf, REDIRECT, register, tokenRequest } from './flow.ts';

let svc: TestService;
let d: Discovered;
beforeAll(async () => {
  svc = await startTestService();
  d = await discover(svc);
});
afterAll(async () => svc?.stop());

const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
  tokenRequest(svc, body, headers);
const mcpStatus = (accessToken: string) => mcpStatusOf(svc, accessToken);

describe('access tokens at /mcp (RFC 9068, MCP authorization 2025-11-25)', () => {
  async function forge(claims: { aud: string; exp: number; typ?: string }): Promise<string> {
    const key = await getSigningKey(svc.deps);
    const { tokens } = await connect(svc, svc.admin);
    const real = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    return new SignJWT({ client_id: real.client_id, scope: 'mcp', grant_id: real.grant_id })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: claims.typ ?? 'at+jwt' })
      .setIssuer(svc.url)
      .setSubject(real.sub)
      .setAudience(claims.aud)
      .setIssuedAt(claims.exp - 600)
      .setExpirationTime(claims.exp)
      .setJti(crypto.randomUUID())
      .sign(key.privateKey);
  }

  it('refuses an expired token with 401 invalid_token and the resource_metadata challenge', async () => {
    const expired = await forge({ aud: `${svc.url}/mcp`, exp: Math.floor(Date.now() / 1000) - 5 });
    const res = await mcpStatus(expired);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource/mcp", scope="mcp", error="invalid_token"`,
    );
  });

  it('refuses a token for another audience, including our own x-service-jwt', async () => {
    const other = await forge({ aud: 'https://other.example/mcp', exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await mcpStatus(other)).status).toBe(401);
    const service = await signServiceJwt(svc.deps, { aud: `${svc.url}/mcp`, sub: 'run_x' });
    expect((await mcpStatus(service)).status).toBe(401);
    const valid = await forge({ aud: `${svc.url}/mcp`, exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await mcpStatus(valid)).status).toBe(200);
  });

  it('refuses a cross-origin browser request (Origin validation)', async () => {
    const { tokens } = await connect(svc, svc.admin);
    const res = await svc.fetch('/mcp', {
      method: 'POST',
      headers: {
        origin: 'https://evil.example',
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
  });

  it('a disabled user is refused on the next request, and their refresh token issues nothing', async () => {
    const { tokens, client } = await connect(svc, svc.admin);
    const mcp = await mcpClient(svc, tokens.access_token);
    await mcp.listTools();
    await svc.deps.sql`update users set disabled_at = now() where lower(email) = ${svc.admin.email}`;
    // Written as psql would: the service hears of it when the change's notification arrives.
    await svc.settled();
    try {
      expect((await mcpStatus(tokens.access_token)).status).toBe(401);
      const refresh = await token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: client.client_id,
      });
      expect((await refresh.json()).error).toBe('invalid_grant');
    } finally {
      await svc.deps.sql`update users set disabled_at = null where lower(email) = ${svc.admin.email}`;
      await mcp.close();
    }
  });
});

describe('revocation (RFC 7009)', () => {
  it('revoking the refresh token ends the grant; unknown tokens answer 200', async () => {
    const { tokens, client } = await connect(svc, svc.admin);
    const revoke = (t: string) =>
      svc.fetch('/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: t,
          client_id: client.client_id,
          token_type_hint: 'refresh_token',
        }),
      });
    expect((await revoke('not-a-token')).status).toBe(200);
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    expect((await revoke(tokens.refresh_token!)).status).toBe(200);
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);
  });

  it('revoking an access token ends its grant too; another client cannot revoke it', async () => {
    const { tokens, client } = await connect(svc, svc.admin);
    const other = await register(d);
    const revoke = (clientId: string) =>
      svc.fetch('/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: tokens.access_token,
          client_id: clientId,
          token_type_hint: 'access_token',
        }),
      });
    expect((await revoke(other.client_id)).status).toBe(200);
    expect((await mcpStatus(tokens.access_token)).status).toBe(200);
    expect((await revoke(client.client_id)).status).toBe(200);
    expect((await mcpStatus(tokens.access_token)).status).toBe(401);
  });
});

describe('dynamic client registration (RFC 7591)', () => {
  async function registerRaw(body: unknown): Promise<Response> {
    return svc.fetch('/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  it('fills defaults, ignores unknown fields and answers 201', async () => {
    const res = await registerRaw({
      redirect_uris: ['https://app.example/cb'],
      client_name: 'Defaults',
      software_statement_x: 'ignored',
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({
      client_name: 'Defaults',
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp',
      client_secret_expires_at: 0,
    });
    expect(typeof body.client_id_issued_at).toBe('number');
    expect(body).not.toHaveProperty('software_statement_x');
  });

  it('accepts https, loopback http and private-use schemes; refuses others with invalid_redirect_uri', async () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback',
      'http://localhost:6274/oauth/callback',
      'cursor://anysphere.cursor-mcp/oauth/callback',
    ]) {
      expect((await registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status).toBe(
        201,
      );
    }
    for (const uri of [
      'http://app.example/cb',
      'javascript:alert(1)',
      'https://app.example/cb#frag',
      'not a uri',
    ]) {
      const res = await registerRaw({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe('invalid_redirect_uri');
    }
  });

  it('refuses unsupported metadata with invalid_client_metadata', async () => {
    for (const body of [
      { redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] },
      { redirect_uris: ['https://a.example/cb'], response_types: ['token'] },
      { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
    ]) {
      const res = await registerRaw(body);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe('invalid_client_metadata');
    }
  });

  it('rate-limits registrations from one address', async () => {
    await svc.deps.sql`
      insert into oauth_clients (id, client_name, redirect_uris, grant_types, response_types, token_endpoint_auth_method, scope, registered_from)
      select 'cli_bulk' || g, 'bulk', '{https://a.example/cb}', '{authorization_code}', '{code}', 'none', 'mcp',
        encode(sha256(convert_to('127.0.0.1', 'UTF8')), 'hex')
      from generate_series(1, 100) g`;
    const res = await registerRaw({
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    expect(res.status).toBe(429);
    await svc.deps.sql`delete from oauth_clients where id like 'cli_bulk%'`;
  });
});

describe('token endpoint basics', () => {
  it('refuses an unknown grant type and a JSON body', async () => {
    const client = await register(d);
    const res = await token({ grant_type: 'password', client_id: client.client_id });
    expect((await res.json()).error).toBe('unsupported_grant_type');
    const json = await svc.fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect((await json.json()).error).toBe('invalid_request');
  });

  it('the SDK surfaces a refused exchange as an error', async () => {
    const client = await register(d);
    await expect(
      exchangeAuthorization(d.issuer, {
        metadata: d.metadata,
        clientInformation: client,
        authorizationCode: 'csoac_01J00000000000000000000000_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
        codeVerifier: 'v'.repeat(43),
        redirectUri: REDIRECT,
      }),
    ).rejects.toThrow();
    await expect(
      refreshAuthorization(d.issuer, {
        metadata: d.metadata,
        clientInformation: client,
        refreshToken: 'nope',
      }),
    ).rejects.toThrow();
  });
});
