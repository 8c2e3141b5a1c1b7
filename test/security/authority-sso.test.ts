// Single sign-on decides who signs in as whom, so: only a super admin changes it, entering their
// password again (REST and the Organization form; never a key), and an SSO sign-in never takes
// over an existing account that was not linked through SSO — unless the provider marks the email
// verified and the organization's own domain covers it — without the person's password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { addPerson, signIn, startTestService, type TestService } from '../helpers/service.ts';
import { Browser } from '../oauth/flow.ts';
import { type OidcPeer, startOidcProvider } from '../peers/oidc-provider.ts';

let svc: TestService;
let idp: OidcPeer;
let orgId: string;
let root: Record<string, string>;
const admin = { email: 'sso.admin@example.test', password: 'sso admin password 1' };
let adminBearer: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService();
  idp = await startOidcProvider(`${svc.url}/login/sso/callback`);
  const [r] = await svc.deps.sql<{ id: string; org_id: string }[]>`
    select id, org_id from users where email = ${svc.admin.email}`;
  orgId = r!.org_id;
  root = await bearerOf(r!.id);
  adminBearer = await bearerOf(await addPerson(svc, { ...admin, role: 'admin' }));
});
afterAll(async () => {
  await idp?.close();
  await svc?.stop();
});

async function bearerOf(userId: string): Promise<Record<string, string>> {
  const { secret } = await createPersonalToken(svc.deps.sql, { userId, name: 't', expiresAt: null });
  return { authorization: `Bearer ${secret}` };
}

const settings = (extra: Record<string, unknown> = {}) => ({
  issuer: idp.issuer,
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  provision_role: 'member',
  ...extra,
});
const sso = (method: string, auth: Record<string, string>, body?: unknown) =>
  svc.fetch('/api/v1/sso', {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const stored = async () => (await svc.deps.sql<{ issuer: string }[]>`select issuer from sso_configs`)[0];
const fieldOf = async (res: Response) =>
  ((await res.json()) as { errors?: Array<{ path: string }> }).errors?.[0]?.path;

/** An SSO round trip in a fresh (or given) browser; the final answer and the session it holds. */
async function ssoSignIn(browser = new Browser(svc)) {
  const { res, url } = await browser.follow(
    `${svc.url}/login/sso?org=${orgId}&next=/settings`,
    (u) => u.pathname === '/settings',
  );
  const whoami = await browser.fetch(`${svc.url}/api/v1/me`);
  const email = whoami.status === 200 ? ((await whoami.json()) as { email: string }).email : null;
  return { res, url, email, browser };
}

describe('SSO settings are a super admin action with the password entered again', () => {
  it('REST: a key, an admin, and a super admin without the password are refused; nothing changes', async () => {
    const key = { 'x-api-key': svc.apiKey };
    expect((await sso('PUT', key, settings({ current_password: svc.admin.password }))).status).toBe(403);
    expect((await sso('PUT', adminBearer, settings({ current_password: admin.password }))).status).toBe(403);
    // A key acting for the super admin is still a key.
    const actingAs = { ...key, 'x-act-as-user': svc.admin.email };
    const viaKey = await sso('PUT', actingAs, settings({ current_password: svc.admin.password }));
    expect(viaKey.status).toBeGreaterThanOrEqual(400);
    const none = await sso('PUT', root, settings());
    expect(none.status).toBe(422);
    expect(await fieldOf(none)).toBe('current_password');
    const wrong = await sso('PUT', root, settings({ current_password: 'not the password' }));
    expect(wrong.status).toBe(422);
    expect(await fieldOf(wrong)).toBe('current_password');
    expect(await stored()).toBeUndefined();

    const ok = await sso('PUT', root, settings({ current_password: svc.admin.password }));
    expect(ok.status).toBe(200);
    expect(await stored()).toMatchObject({ issuer: idp.issuer });
    const [audited] = await svc.deps.sql`select 1 from audit_log where event = 'sso.updated'`;
    expect(audited).toBeDefined();

    expect((await sso('DELETE', key)).status).toBe(403);
    expect((await sso('DELETE', adminBearer, { current_password: admin.password })).status).toBe(403);
    expect((await sso('DELETE', root)).status).toBe(422);
    expect(await stored()).toMatchObject({ issuer: idp.issuer });
    const off = await sso('DELETE', root, { current_password: svc.admin.password });
    expect(off.status).toBe(204);
    expect(await stored()).toBeUndefined();
    expect((await sso('PUT', root, settings({ current_password: svc.admin.password }))).status).toBe(200);
  });

  it('the Organization form: an admin is refused, a super admin needs the password field', async () => {
    const form = (s: { cookie: string; csrf: string }, path: string, fields: Record<string, string>) =>
      svc.fetch(path, {
        method: 'POST',
        headers: { cookie: s.cookie },
        body: new URLSearchParams({ _csrf: s.csrf, ...fields }),
        redirect: 'manual',
      });
    const evil = {
      issuer: 'https://idp.attacker.example',
      client_id: 'x',
      client_secret: 'y',
      provision_role: 'member',
      enabled: 'on',
    };
    const a = await signIn(svc, admin.email, admin.password);
    expect((await form(a, '/organization/sso', { ...evil, current_password: admin.password })).status).toBe(
      403,
    );
    expect((await form(a, '/organization/sso/delete', { current_password: admin.password })).status).toBe(
      403,
    );
    const s = await signIn(svc, svc.admin.email, svc.admin.password);
    const page = await (await svc.fetch('/organization', { headers: { cookie: s.cookie } })).text();
    expect(page).toMatch(
      /name="current_password"[^>]*type="password"|type="password"[^>]*name="current_password"/,
    );
    const missing = await form(s, '/organization/sso', evil);
    expect(missing.status).toBe(422);
    expect(await missing.text()).toContain('enter your password again');
    expect((await form(s, '/organization/sso', { ...evil, current_password: 'wrong password' })).status).toBe(
      422,
    );
    expect(await stored()).toMatchObject({ issuer: idp.issuer });
    const saved = await form(s, '/organization/sso', {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: '',
      provision_role: 'member',
      domains: 'corp.example.test',
      enabled: 'on',
      current_password: svc.admin.password,
    });
    expect(saved.status).toBe(303);
    const [row] = await svc.deps.sql<{ domains: string[] }[]>`select domains from sso_configs`;
    expect(row!.domains).toEqual(['corp.example.test']);
  });
});

describe('an SSO sign-in never takes over an existing account unlinked', () => {
  // As a super admin sets it (independent of the tests above).
  beforeAll(async () => {
    const res = await sso(
      'PUT',
      root,
      settings({ current_password: svc.admin.password, domains: ['corp.example.test'] }),
    );
    expect(res.status).toBe(200);
  });

  it("a provider asserting the super admin's verified email gets no session; their password links it", async () => {
    idp.account = { sub: 'someone-else', email: svc.admin.email, email_verified: true, name: 'Root?' };
    const first = await ssoSignIn();
    expect(first.res.status).toBe(403);
    expect(await first.res.text()).toContain('Sign in with its password once');
    expect(first.email).toBeNull();
    const [linked] = await svc.deps.sql`select 1 from sso_links where subject = 'someone-else'`;
    expect(linked).toBeUndefined();

    // Another person's password in that browser links nothing.
    await first.browser.signIn('/', admin.email, admin.password);
    expect((await ssoSignIn(new Browser(svc))).email).toBeNull();
    expect((await ssoSignIn(first.browser)).email).toBe(admin.email); // the admin's own session stays
    const [still] = await svc.deps.sql`select 1 from sso_links where subject = 'someone-else'`;
    expect(still).toBeUndefined();

    // The person themselves confirms with their password: from then on SSO signs them in.
    const own = await ssoSignIn();
    expect(own.res.status).toBe(403);
    const signedIn = await own.browser.signIn('/', svc.admin.email, svc.admin.password);
    expect(signedIn.status).toBe(303);
    const later = await ssoSignIn();
    expect(later.email).toBe(svc.admin.email);
    const [event] = await svc.deps.sql`select 1 from audit_log where event = 'user.sso_linked'`;
    expect(event).toBeDefined();
  });

  it("a verified email in the organization's domain links at once; unverified or outside, never", async () => {
    await addPerson(svc, { email: 'dee@corp.example.test', password: 'dee password 1234' });
    await addPerson(svc, { email: 'eve@elsewhere.example.test', password: 'eve password 1234' });
    idp.account = { sub: 'dee-sub', email: 'dee@corp.example.test', email_verified: false, name: 'Dee' };
    expect((await ssoSignIn()).email).toBeNull();
    idp.account = { sub: 'eve-sub', email: 'eve@elsewhere.example.test', email_verified: true, name: 'Eve' };
    expect((await ssoSignIn()).email).toBeNull();
    idp.account = { sub: 'dee-sub', email: 'dee@corp.example.test', email_verified: true, name: 'Dee' };
    expect((await ssoSignIn()).email).toBe('dee@corp.example.test');
  });

  it('an account SSO created signs in again by its subject', async () => {
    idp.account = { sub: 'new-sub', email: 'newcomer@example.test', email_verified: true, name: 'New' };
    expect((await ssoSignIn()).email).toBe('newcomer@example.test');
    expect((await ssoSignIn()).email).toBe('newcomer@example.test');
  });
});
