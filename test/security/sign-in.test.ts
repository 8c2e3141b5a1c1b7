// Where the browser goes after sign-in, who may post the sign-in and
// sign-out forms, and which sessions stay valid — in Debian's Chromium where a browser decides.
import { createServer, type Server } from 'node:http';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPerson, freePort, signIn, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
const person = { email: 'sign-in-person@example.test', password: 'person password 123' };

beforeAll(async () => {
  svc = await startTestService();
  await addPerson(svc, person);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe('the target after sign-in stays on this service', () => {
  // Each is what an attacker puts in ?next=; the browser must end on our origin whatever it is.
  const variants = [
    '/%09/evil.test/',
    '/%0a/evil.test/',
    '/%0d%0a/evil.test/',
    '/\\evil.test/',
    '/%5Cevil.test/',
    '/%5C%5Cevil.test/',
    '/.//evil.test/',
    '//evil.test/',
    '/%2F%2Fevil.test/',
    'https://evil.test/',
    '/%E3%80%82/evil.test/',
  ];
  for (const next of variants) {
    it(`next=${next}`, async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const evilRequests: string[] = [];
      page.on('request', (r) => {
        if (new URL(r.url()).hostname.includes('evil')) evilRequests.push(r.url());
      });
      const res = await page.goto(`${svc.url}/login?next=${next}`);
      expect(res?.status()).toBe(200);
      await page.fill('#email', person.email);
      await page.fill('#password', person.password);
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
      await page.waitForLoadState('load');
      expect(new URL(page.url()).origin).toBe(new URL(svc.url).origin);
      // Signed in, not bounced back to the form: the test proves where a signed-in browser lands.
      expect(new URL(page.url()).pathname).not.toBe('/login');
      expect(evilRequests).toEqual([]);
      await context.close();
    });
  }

  it('a newline in a posted next never turns into a 500 after the session was created', async () => {
    for (const next of ['/\n/evil.test', '/\r\nSet-Cookie: x=y', '/\t/evil.test', '/\\\\evil.test']) {
      const res = await svc.fetch('/login', {
        method: 'POST',
        body: new URLSearchParams({ email: person.email, password: person.password, next }),
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/');
    }
  });

  it('a same-origin path with its query survives', async () => {
    const res = await svc.fetch('/login', {
      method: 'POST',
      body: new URLSearchParams({ email: person.email, password: person.password, next: '/runs?x=1#top' }),
      redirect: 'manual',
    });
    expect(res.headers.get('location')).toBe('/runs?x=1#top');
  });
});

describe('login CSRF and logout CSRF', () => {
  let other: Server;
  let otherUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    // Another origin (localhost vs 127.0.0.1, another port) serving forms that post to us.
    other = createServer((req, res) => {
      const action = req.url === '/logout' ? '/logout' : '/login';
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><form id="f" method="post" action="${svc.url}${action}">
        <input name="email" value="${svc.admin.email}"><input name="password" value="${svc.admin.password}">
        <input name="next" value="/"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => other.listen(port, 'localhost', resolve));
    otherUrl = `http://localhost:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => other.close(() => resolve())));

  it('a cross-site sign-in form is refused and creates no session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const answered = page.waitForResponse(
      (r) => r.url() === `${svc.url}/login` && r.request().method() === 'POST',
    );
    await page.goto(`${otherUrl}/login`);
    const res = await answered;
    expect(res.status()).toBe(403);
    const cookies = await context.cookies(svc.url);
    expect(cookies.find((c) => c.name === 'cs_session')).toBeUndefined();
    await context.close();
  });

  it('a cross-site sign-out form does not end the session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${svc.url}/login`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await Promise.all([page.waitForURL(`${svc.url}/dashboards`), page.click('button[type=submit]')]);
    const answered = page.waitForResponse((r) => r.url() === `${svc.url}/logout`);
    await page.goto(`${otherUrl}/logout`);
    expect((await answered).status()).toBe(403);
    await page.goto(`${svc.url}/settings`);
    expect(new URL(page.url()).pathname).toBe('/settings');
    // Our own sign-out button still works.
    await Promise.all([page.waitForURL(/\/login/), page.click('form[action="/logout"] button')]);
    await page.goto(`${svc.url}/settings`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await context.close();
  });
});

describe('sessions', () => {
  const settingsStatus = async (cookie: string) =>
    (await svc.fetch('/api/v1/me', { headers: { cookie } })).status;

  it('a new sign-in in the same browser ends the session it replaces', async () => {
    const first = await signIn(svc, person.email, person.password);
    const res = await svc.fetch('/login', {
      method: 'POST',
      headers: { cookie: first.cookie },
      body: new URLSearchParams({ email: person.email, password: person.password, next: '/' }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(await settingsStatus(first.cookie)).toBe(401);
  });

  it('changing the password ends every other session, keeps this one, and the old password stops working', async () => {
    const a = await signIn(svc, person.email, person.password);
    const b = await signIn(svc, person.email, person.password);
    const next = 'a brand new password 456';
    const res = await svc.fetch('/settings/password', {
      method: 'POST',
      headers: { cookie: a.cookie },
      body: new URLSearchParams({ _csrf: a.csrf, current_password: person.password, new_password: next }),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(await settingsStatus(a.cookie)).toBe(200);
    expect(await settingsStatus(b.cookie)).toBe(401);
    await expect(signIn(svc, person.email, person.password)).rejects.toThrow(/401/);
    person.password = next;
  });

  it('a wrong password keeps the address typed (escaped), announces the refusal, and never echoes the password', async () => {
    const post = (email: string) =>
      svc.fetch('/login', {
        method: 'POST',
        headers: { origin: new URL(svc.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email, password: 'wrong password 987', next: '/' }),
      });
    const res = await post(person.email);
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toMatch(new RegExp(`id="email"[^>]*value="${person.email}"`));
    expect(html).toMatch(/<p class="error" role="alert">Wrong email or password\.<\/p>/);
    expect(html).not.toContain('wrong password 987');
    const odd = await (await post('"><script>x()</script>@example.test')).text();
    expect(odd).not.toContain('<script>x()');
    expect(odd).toContain('value="&quot;&gt;&lt;script&gt;x()&lt;/script&gt;@example.test"');
  });

  it('a wrong current password changes nothing', async () => {
    const a = await signIn(svc, person.email, person.password);
    const b = await signIn(svc, person.email, person.password);
    const res = await svc.fetch('/settings/password', {
      method: 'POST',
      headers: { cookie: a.cookie },
      body: new URLSearchParams({
        _csrf: a.csrf,
        current_password: 'not it at all',
        new_password: 'whatever 123456',
      }),
    });
    expect(res.status).toBe(422);
    expect(await settingsStatus(b.cookie)).toBe(200);
  });

  it('settings lists the sessions and ends another one', async () => {
    const a = await signIn(svc, person.email, person.password);
    const b = await signIn(svc, person.email, person.password);
    const html = await (await svc.fetch('/settings', { headers: { cookie: a.cookie } })).text();
    const ends = [...html.matchAll(/action="\/settings\/sessions\/(ses_[0-9A-Z]+)\/end"/g)].map((m) => m[1]);
    expect(html).toContain('This browser');
    expect(ends.length).toBeGreaterThanOrEqual(1);
    for (const id of ends) {
      await svc.fetch(`/settings/sessions/${id}/end`, {
        method: 'POST',
        headers: { cookie: a.cookie },
        body: new URLSearchParams({ _csrf: a.csrf }),
        redirect: 'manual',
      });
    }
    expect(await settingsStatus(b.cookie)).toBe(401);
    expect(await settingsStatus(a.cookie)).toBe(200);
  });
});
