// The Organization page in Debian's Chromium: an admin chooses whether a new API key is their own
// or a service account's (with its role), and the list shows whose each key is; only a super admin
// sees, and uses, the switch that lets a key act for users.
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
const admin = { email: 'page.admin@example.test', password: 'page admin password 1' };

beforeAll(async () => {
  svc = await startTestService();
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: admin.email,
    role: 'admin',
    password: admin.password,
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 60_000);
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
  await Promise.all([
    page.waitForURL(/\/dashboards/),
    page.click('form[action="/login"] button[type=submit]'),
  ]);
  await page.goto('/organization');
  return page;
}

async function createKey(page: Page, name: string, owner: 'me' | 'service_account', role?: string) {
  await page.fill('#key-name', name);
  await page.check(`#api-key-form input[name=owner][value=${owner}]`);
  if (role) await page.selectOption('#key-role', role);
  await Promise.all([page.waitForNavigation(), page.click('#api-key-form button[type=submit]')]);
  return (await page.locator('#new-secret').textContent())!.trim();
}

const ownerText = async (page: Page, name: string) =>
  (await page.locator('#api-key-list li', { hasText: name }).locator('.key-owner').textContent())!.trim();

describe('API keys on the Organization page', () => {
  it('an admin makes a service account key and an own key, and sees whose each is', async () => {
    const page = await signIn(admin);
    expect(await page.locator('input[name=act_as_allowed]').count()).toBe(0);

    const robot = await createKey(page, 'nightly export', 'service_account', 'admin');
    expect(robot).toMatch(/^cskey_/);
    await page.goto('/organization');
    expect(await ownerText(page, 'nightly export')).toMatch(/^service account nightly export \(admin\)/);
    const robotMe = (await (await svc.fetch('/api/v1/me', { headers: { 'x-api-key': robot } })).json()) as {
      role: string;
      service_account?: boolean;
    };
    expect(robotMe).toMatchObject({ role: 'admin', service_account: true });

    const mine = await createKey(page, 'my laptop', 'me');
    await page.goto('/organization');
    expect(await ownerText(page, 'my laptop')).toBe(`owned by ${admin.email} (admin)`);
    const mineMe = (await (await svc.fetch('/api/v1/me', { headers: { 'x-api-key': mine } })).json()) as {
      email: string;
    };
    expect(mineMe.email).toBe(admin.email);
    await page.context().close();
  });

  it('a super admin allows a key to act for users, and the list says so', async () => {
    const page = await signIn(svc.admin);
    const row = page.locator('#api-key-list li', { hasText: 'my laptop' });
    await Promise.all([
      page.waitForNavigation(),
      row.locator('button', { hasText: 'Allow acting for users' }).click(),
    ]);
    expect(await ownerText(page, 'my laptop')).toContain('may act for users');
    await page.context().close();
  });
});
