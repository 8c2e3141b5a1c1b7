import { exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { callTool, mcpClient } from '../mcp/target.ts';
import { type OidcPeer, startOidcProvider } from '../peers/oidc-provider.ts';
import { Browser, discover, formFields, REDIRECT, register } from './flow.ts';

let svc: TestService;
let idp: OidcPeer;
/** SSO settings are a super admin's, made as themselves (a personal token) with their password. */
let superAdmin: Record<string, string>;
beforeAll(async () => {
  svc = await startTestService();
  idp = await startOidcProvider(`${svc.url}/login/sso/callback`);
  const [root] = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
  const { secret } = await createPersonalToken(svc.deps.sql, {
    userId: root!.id,
    name: 't',
    expiresAt: null,
  });
  superAdmin = { authorization: `Bearer ${secret}` };
});
afterAll(async () => {
  await idp?.close();
  await svc?.stop();
});

function admin(method: string, body?: unknown): Promise<Response> {
  return svc.fetch('/api/v1/sso', {
    method,
    headers: { ...superAdmin, 'content-type': 'application/json' },
    ...(body === undefined
      ? {}
      : { body: JSON.stringify({ ...(body as object), current_password: svc.admin.password }) }),
  });
}

describe('SSO configuration API', () => {
  it('sets the organization OIDC provider, seals the secret and never returns it', async () => {
    const res = await admin('PUT', {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      provision_role: 'member',
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(idp.clientSecret);
    expect(JSON.parse(text)).toMatchObject({
      issuer: idp.issuer,
      client_id: idp.clientId,
      redirect_uri: `${svc.url}/login/sso/callback`,
      enabled: true,
    });
    const [row] = await svc.deps.sql<
      { client_secret_enc: string }[]
    >`select client_secret_enc from sso_configs`;
    expect(row!.client_secret_enc.startsWith('cs1.')).toBe(true);
    expect((await admin('PUT', { issuer: 'not a url', client_id: 'x', client_secret: 'y' })).status).toBe(
      422,
    );
    expect((await svc.fetch('/api/v1/sso', { method: 'GET' })).status).toBe(401);
  });
});

describe('MCP authorization with the organization SSO (OIDC, oauth4webapi against oidc-provider)', () => {
  it('the user signs in at the IdP, is provisioned by verified email, consents, and the client gets tokens', async () => {
    const d = await discover(svc);
    const client = await register(d, { client_name: 'SSO AI client' });
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      redirectUrl: REDIRECT,
      scope: 'mcp',
      state: 'sso-state',
      resource: new URL(d.resource),
    });
    const browser = new Browser(svc);
    // Not signed in: sent to the login page, which offers the organization's SSO.
    const toLogin = await browser.fetch(authorizationUrl.toString());
    const loginUrl = browser.abs(toLogin.headers.get('location')!);
    const loginPage = await (await browser.fetch(loginUrl)).text();
    const ssoHref = /href="(\/login\/sso\?[^"]+)"/.exec(loginPage)?.[1]?.replace(/&amp;/g, '&');
    expect(ssoHref).toBeTruthy();
    // Through the IdP (PKCE, state, nonce) and back to our callback, then back to /oauth/authorize.
    const { res: consent, url } = await browser.follow(browser.abs(ssoHref!));
    expect(new URL(url).pathname).toBe('/oauth/authorize');
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('SSO AI client');
    expect(html).toContain(idp.account.email);
    const approved = await browser.fetch(browser.abs('/oauth/authorize'), {
      method: 'POST',
      body: new URLSearchParams({ ...formFields(html), decision: 'approve' }),
    });
    const back = new URL(approved.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('sso-state');
    const tokens = await exchangeAuthorization(d.issuer, {
      metadata: d.metadata,
      clientInformation: client,
      authorizationCode: back.searchParams.get('code')!,
      codeVerifier,
      redirectUri: REDIRECT,
      resource: new URL(d.resource),
    });
    const [user] = await svc.deps.sql<{ id: string; role: string; password_hash: string | null }[]>`
      select id, role, password_hash from users where lower(email) = ${idp.account.email}`;
    expect(user).toMatchObject({ role: 'member', password_hash: null });
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    expect(claims.sub).toBe(user!.id);
    const mcp = await mcpClient(svc, tokens.access_token);
    expect((await callTool(mcp, 'list_databases', {})).data).toEqual({ databases: [] });
    await mcp.close();
  });

  it('refuses an IdP account whose email is not verified', async () => {
    idp.account = {
      sub: 'idp-user-2',
      email: 'unverified@example.test',
      email_verified: false,
      name: 'Unverified',
    };
    const [org] = await svc.deps.sql<{ org_id: string }[]>`select org_id from sso_configs`;
    const browser = new Browser(svc);
    const { res, url } = await browser.follow(`${svc.url}/login/sso?org=${org!.org_id}&next=/`);
    expect(new URL(url).pathname).toBe('/login/sso/callback');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('did not confirm your email');
    const users = await svc.deps.sql`select 1 from users where lower(email) = 'unverified@example.test'`;
    expect(users).toHaveLength(0);
  });

  it('refuses a callback without the sealed state cookie (CSRF, RFC 9700 §4.7)', async () => {
    const res = await svc.fetch('/login/sso/callback?code=x&state=y');
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie') ?? '').not.toContain('cs_session=');
  });
});
