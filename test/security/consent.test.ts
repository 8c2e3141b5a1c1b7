// Remembered consent is bound to the redirect URI and expires; the consent
// page says how long access lasts and where to end it; access tokens must carry exp, iat and jti.
import { startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSigningKey } from '../../identity/signing-keys.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  Browser,
  connect,
  type Discovered,
  discover,
  mcpStatusOf,
  REDIRECT,
  register,
} from '../oauth/flow.ts';

let svc: TestService;
let d: Discovered;
beforeAll(async () => {
  // Consent remembered for 3 s, so the expiry can be stepped past.
  svc = await startTestService({ env: { OAUTH_CONSENT_SECONDS: '3' } });
  d = await discover(svc);
});
afterAll(async () => svc?.stop());

/** The authorize response for this client at this redirect URI, in an already signed-in browser. */
async function authorizeAt(browser: Browser, clientId: string, redirectUrl: string): Promise<Response> {
  const client = { client_id: clientId, redirect_uris: [REDIRECT] };
  const { authorizationUrl } = await startAuthorization(d.issuer, {
    metadata: d.metadata,
    clientInformation: client,
    redirectUrl,
    scope: 'mcp',
    resource: new URL(d.resource),
  });
  return browser.fetch(authorizationUrl.toString());
}

describe('remembered consent', () => {
  it('is silent only at the same redirect URI, asks again at a new loopback port, and expires', async () => {
    const client = await register(d);
    const browser = new Browser(svc);
    await connect(svc, svc.admin, { browser, client, discovered: d });
    // Same client, same redirect URI: remembered, the code comes back without a page.
    const again = await authorizeAt(browser, client.client_id, REDIRECT);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    // A new loopback port (RFC 8252 lets it vary) is a new place for codes to go: ask.
    const moved = await authorizeAt(browser, client.client_id, 'http://127.0.0.1:40123/callback');
    expect(moved.status).toBe(200);
    expect(await moved.text()).toContain('Allow access');
    // After the remembered period, ask again even at the same address.
    await new Promise((r) => setTimeout(r, 3500));
    const later = await authorizeAt(browser, client.client_id, REDIRECT);
    expect(later.status).toBe(200);
  });

  it('the consent page says how long access lasts, where to end it, and tells Allow from Deny', async () => {
    const client = await register(d);
    const browser = new Browser(svc);
    await browser.signIn('/', svc.admin.email, svc.admin.password);
    const html = await (await authorizeAt(browser, client.client_id, REDIRECT)).text();
    expect(html).toContain('Access lasts until you disconnect it');
    expect(html).toContain('href="/settings"');
    expect(html).toMatch(/class="allow"[^>]*>\s*Allow access/);
    expect(html).toMatch(/class="deny"[^>]*>\s*Deny/);
    // Sign-out on this page carries the CSRF token like every other page.
    expect(html).toMatch(/action="\/logout"[\s\S]*name="_csrf"/);
  });
});

describe('access token claims (RFC 9068 §2.2)', () => {
  async function forge(omit: 'exp' | 'iat' | 'jti' | null): Promise<string> {
    const key = await getSigningKey(svc.deps);
    const { tokens } = await connect(svc, svc.admin);
    const real = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    const jwt = new SignJWT({ client_id: real.client_id, scope: 'mcp', grant_id: real.grant_id })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
      .setIssuer(svc.url)
      .setSubject(real.sub)
      .setAudience(`${svc.url}/mcp`);
    if (omit !== 'iat') jwt.setIssuedAt();
    if (omit !== 'exp') jwt.setExpirationTime('5m');
    if (omit !== 'jti') jwt.setJti(crypto.randomUUID());
    return jwt.sign(key.privateKey);
  }

  for (const claim of ['exp', 'iat', 'jti'] as const) {
    it(`refuses a correctly signed token without ${claim}`, async () => {
      expect((await mcpStatusOf(svc, await forge(claim))).status).toBe(401);
    });
  }

  it('accepts the same token with all three', async () => {
    expect((await mcpStatusOf(svc, await forge(null))).status).toBe(200);
  });
});
