import { startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  authorizeInBrowser,
  Browser,
  connect,
  type Discovered,
  discover,
  mcpStatusOf,
  REDIRECT,
  register,
  tokenRequest,
} from './flow.ts';

let svc: TestService;
let d: Discovered;
beforeAll(async () => {
  // A 2 s refresh grace so the reuse test can step past it.
  svc = await startTestService({ env: { OAUTH_REFRESH_GRACE_SECONDS: '2' } });
  d = await discover(svc);
});
afterAll(async () => svc?.stop());

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** A signed-in browser at the authorize endpoint with these parameters; returns the response. */
async function authorize(params: Record<string, string>, browser?: Browser): Promise<Response> {
  const b = browser ?? new Browser(svc);
  if (!browser) await b.signIn('/', svc.admin.email, svc.admin.password);
  return b.fetch(`${svc.url}/oauth/authorize?${new URLSearchParams(params)}`);
}

const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
  tokenRequest(svc, body, headers);
const mcpStatus = (accessToken: string) => mcpStatusOf(svc, accessToken);

describe('PKCE (RFC 7636, RFC 9700 §2.1.1)', () => {
  it('refuses a request without code_challenge, redirecting invalid_request with state and iss', async () => {
    const client = await register(d);
    const res = await authorize({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      state: 's',
    });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: 'invalid_request',
      state: 's',
      iss: svc.url,
    });
  });

  it('refuses code_challenge_method=plain and a missing method', async () => {
    const client = await register(d);
    for (const method of ['plain', undefined]) {
      const params: Record<string, string> = {
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: CHALLENGE,
      };
      if (method) params.code_challenge_method = method;
      const res = await authorize(params);
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('refuses a wrong code_verifier with invalid_grant, and the code is burned', async () => {
    const client = await register(d);
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      redirectUrl: REDIRECT,
      resource: new URL(d.resource),
    });
    const browser = new Browser(svc);
    const back = await authorizeInBrowser(browser, authorizationUrl.toString(), svc.admin);
    const code = back.searchParams.get('code')!;
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: `${codeVerifier.slice(0, -1)}${codeVerifier.endsWith('x') ? 'y' : 'x'}`,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    expect((await wrong.json()).error).toBe('invalid_grant');
    const right = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: codeVerifier,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    });
    expect((await right.json()).error).toBe('invalid_grant');
  });
});

describe('authorization codes (OAuth 2.1 §4.1.3)', () => {
  it('a code used twice is refused and the tokens it issued stop working', async () => {
    const client = await register(d);
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      redirectUrl: REDIRECT,
      resource: new URL(d.resource),
    });
    const back = await authorizeInBrowser(new Browser(svc), authorizationUrl.toString(), svc.admin);
    const body = {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      code_verifier: codeVerifier,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    };
    const first = await (await token(body)).json();
    expect((await mcpStatus(first.access_token)).status).toBe(200);
    const second = await token(body);
    expect(second.status).toBe(400);
    expect((await second.json()).error).toBe('invalid_grant');
    expect((await mcpStatus(first.access_token)).status).toBe(401);
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: client.client_id,
    });
    expect((await refresh.json()).error).toBe('invalid_grant');
  });

  it('the redirect_uri at the token endpoint must be the one authorized', async () => {
    const client = await register(d, { redirect_uris: [REDIRECT, 'https://app.example/cb'] });
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      redirectUrl: REDIRECT,
      resource: new URL(d.resource),
    });
    const back = await authorizeInBrowser(new Browser(svc), authorizationUrl.toString(), svc.admin);
    const res = await token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      code_verifier: codeVerifier,
      redirect_uri: 'https://app.example/cb',
      client_id: client.client_id,
    });
    expect((await res.json()).error).toBe('invalid_grant');
  });
});

describe('redirect URIs (OAuth 2.1 §4.1.1, RFC 8252 §7.3)', () => {
  it('an unregistered redirect URI or unknown client shows an error page and never redirects', async () => {
    const client = await register(d);
    for (const params of [
      { client_id: client.client_id, redirect_uri: 'https://evil.example/cb' },
      { client_id: client.client_id, redirect_uri: 'http://127.0.0.1:33418/other' },
      { client_id: 'cli_01J00000000000000000000000', redirect_uri: REDIRECT },
    ]) {
      const res = await authorize({
        ...params,
        response_type: 'code',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('Cannot connect');
    }
  });

  it('loopback redirects match any port, and localhost equals 127.0.0.1', async () => {
    const client = await register(d, { redirect_uris: ['http://localhost/callback'] });
    const res = await authorize({
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:51234/callback',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(200);
  });
});

describe('resource indicators (RFC 8707)', () => {
  it('refuses a resource other than the MCP endpoint with invalid_target', async () => {
    const client = await register(d);
    const res = await authorize({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      resource: 'https://other.example/mcp',
      state: 'r',
    });
    const back = new URL(res.headers.get('location')!);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: 'invalid_target',
      state: 'r',
      iss: svc.url,
    });
  });

  it('refuses a different resource at the token endpoint', async () => {
    const client = await register(d);
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      redirectUrl: REDIRECT,
      resource: new URL(d.resource),
    });
    const back = await authorizeInBrowser(new Browser(svc), authorizationUrl.toString(), svc.admin);
    const res = await token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      code_verifier: codeVerifier,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
      resource: 'https://other.example/mcp',
    });
    expect((await res.json()).error).toBe('invalid_target');
  });
});

describe('refresh token rotation (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2)', () => {
  it('a parallel refresh inside the grace period works; reuse after it revokes the whole grant', async () => {
    const { tokens, client } = await connect(svc, svc.admin);
    const refresh = (rt: string) =>
      token({ grant_type: 'refresh_token', refresh_token: rt, client_id: client.client_id });
    const a = await (await refresh(tokens.refresh_token!)).json();
    const b = await (await refresh(tokens.refresh_token!)).json();
    expect(a.access_token).toBeTruthy();
    expect(b.access_token).toBeTruthy();
    await new Promise((r) => setTimeout(r, 2500));
    const reuse = await refresh(tokens.refresh_token!);
    expect(reuse.status).toBe(400);
    expect((await reuse.json()).error).toBe('invalid_grant');
    // The whole grant is gone: the newest refresh token and every access token.
    expect((await (await refresh(a.refresh_token)).json()).error).toBe('invalid_grant');
    expect((await mcpStatus(a.access_token)).status).toBe(401);
    expect((await mcpStatus(b.access_token)).status).toBe(401);
  });

  it('a refresh token works only for the client it was issued to', async () => {
    const { tokens } = await connect(svc, svc.admin);
    const other = await register(d);
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: other.client_id,
    });
    expect((await res.json()).error).toBe('invalid_grant');
  });
});

describe('confidential clients (RFC 6749 §2.3.1)', () => {
  it('registers with a hashed secret and authenticates with Basic or post; a wrong secret is invalid_client', async () => {
    const client = await register(d, { token_endpoint_auth_method: 'client_secret_basic' });
    expect(client.client_secret).toMatch(/^csocs_/);
    expect(client.client_secret_expires_at).toBe(0);
    const [row] = await svc.deps.sql<
      { secret_hash: string }[]
    >`select secret_hash from oauth_clients where id = ${client.client_id}`;
    expect(row!.secret_hash).not.toContain(client.client_secret!);
    const { tokens } = await connect(svc, svc.admin, { client, discovered: d });
    expect(tokens.access_token).toBeTruthy();

    const basic = (secret: string) =>
      `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;
    const wrong = await token(
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
      // One character changed — to another one even when the secret already ends in A.
      {
        authorization: basic(
          `${client.client_secret!.slice(0, -1)}${client.client_secret!.endsWith('A') ? 'B' : 'A'}`,
        ),
      },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await wrong.json()).error).toBe('invalid_client');
    const none = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect((await none.json()).error).toBe('invalid_client');
    const post = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
      client_secret: client.client_secret!,
    });
    expect(post.status).toBe(200);
  });
});
