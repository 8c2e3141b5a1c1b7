// The Organization and People pages in Debian's Chromium (playwright-core): single sign-on is
// saved only by a super admin who enters their password again, and an admin is offered no
// password reset for another admin.
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPerson, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
const admin = { email: 'page.admin@example.test', password: 'page admin password' };
let peerId: string;
let memberId: string;

beforeAll(async () => {
  svc = await startTestService();
  await addPerson(svc, { ...admin, role: 'admin' });
  peerId = await addPerson(svc, {
    email: 'page.peer@example.test',
    password: 'peer password 123',
    role: 'admin',
  });
  memberId = await addPerson(svc, { email: 'page.member@example.test', password: 'member password 1' });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function signIn(who: { email: string; password: string }): Promise<Page> {
  const context = await browser.newContext({ baseURL: svc.url });
  const page = await context.newPage();
  await page.goto('/login');
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type=submit]')]);
  return page;
}

async function fillSso(page: Page, password: string): Promise<void> {
  await page.goto('/organization');
  await page.fill('#sso-issuer', 'https://login.example.test');
  await page.fill('#sso-client', 'countersign');
  await page.fill('#sso-secret', 'a client secret');
  await page.fill('#sso-password', password);
  await Promise.all([
    page.waitForNavigation(),
    page.click('form[action="/organization/sso"] button[type=submit]'),
  ]);
}

const stored = async () => (await svc.deps.sql`select 1 from sso_configs`).length;

describe('authority on the pages (Chromium)', () => {
  it('single sign-on: an admin is refused, a super admin needs the right password', async () => {
    const a = await signIn(admin);
    await fillSso(a, admin.password);
    expect(await a.locator('.error').first().textContent()).toContain('only a super admin');
    expect(await stored()).toBe(0);

    const root = await signIn(svc.admin);
    await fillSso(root, 'not my password');
    expect(await root.locator('.error').first().textContent()).toContain('is not your current password');
    expect(await stored()).toBe(0);
    await fillSso(root, svc.admin.password);
    expect(await root.locator('.notice').textContent()).toContain('Single sign-on saved.');
    expect(await stored()).toBe(1);
  });

  it('an admin is offered a password reset for a member, not for another admin', async () => {
    const a = await signIn(admin);
    await a.goto('/people');
    await a.locator(`#person-${memberId} >> text=Password link`).waitFor();
    expect(await a.locator(`#person-${peerId} >> text=Password link`).count()).toBe(0);
  });
});
