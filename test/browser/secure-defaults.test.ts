// Safe from the first click, in Debian's Chromium: an admin registers a database leaving the
// form's defaults, and a member without a grant does not see it; a wrong password is caught before
// anything is saved; removing a protection rule asks first and names the people who lose it.
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SHOTS = '/work/notes/shots/onboarding/';
let svc: TestService;
let browser: Browser;
const admin = { email: 'registrar@example.test', password: 'registrar password 1' };
const member = { email: 'no.grant@example.test', password: 'member password 123' };
let memberId = '';
let dbPath = '';

beforeAll(async () => {
  svc = await startTestService();
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  // A plain admin, not a super admin: a restricted database must stay visible to its registrant.
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: admin.email,
    role: 'admin',
    password: admin.password,
  });
  memberId = (
    await createUser(svc.deps.sql, {
      orgId: org!.id,
      email: member.email,
      role: 'member',
      password: member.password,
    })
  ).id;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function signIn(who: { email: string; password: string }, width = 1280): Promise<Page> {
  const context = await browser.newContext({ baseURL: svc.url, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto('/login');
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([
    page.waitForURL(/\/dashboards/),
    page.click('form[action="/login"] button[type=submit]'),
  ]);
  return page;
}

async function fillRegistration(page: Page, name: string, password: string): Promise<void> {
  const pg = servers().postgres;
  await page.goto('/databases/new');
  await page.fill('#f-name', name);
  await page.fill('#f-hostname', pg.host);
  await page.fill('#f-port', String(pg.port));
  await page.fill('#f-database', pg.database);
  await page.fill('#f-c0_username', pg.user);
  await page.fill('#f-c0_password', password);
}

const submitRegistration = (page: Page) =>
  Promise.all([page.waitForNavigation(), page.click('form[action="/databases"] button[type=submit]')]);

describe('secure defaults of the registration form', () => {
  it('registers with the defaults: restricted to the registrant, one review; a member without a grant cannot see it', async () => {
    const page = await signIn(admin);
    await fillRegistration(page, 'payroll', servers().postgres.password);
    expect(await page.isChecked('input[name=restrict_access]')).toBe(true);
    expect(await page.inputValue('#f-c0_reviews_required')).toBe('1');
    const who = (await page.locator('#who-can-query').textContent()) ?? '';
    expect(who).toContain(`Only you (${admin.email})`);
    expect(who).toContain('wait for 1 approval(s)');
    await page.screenshot({ path: `${SHOTS}register-defaults.png`, fullPage: true });
    await submitRegistration(page);
    expect(await page.locator('.notice').textContent()).toContain('Registered payroll');
    dbPath = new URL(page.url()).pathname;
    await page.locator('text=1 approval(s)').first().waitFor();
    // The registrant still sees it in the list.
    await page.goto('/databases');
    expect(await page.locator('table a', { hasText: 'payroll' }).count()).toBe(1);

    const theMember = await signIn(member, 390);
    await theMember.goto('/databases');
    expect(await theMember.locator('body').textContent()).not.toContain('payroll');
    await theMember.goto('/console');
    expect(await theMember.locator('body').textContent()).not.toContain('payroll');
    await theMember.context().close();
  });

  it('catches a wrong password before saving, with the database’s own error and no password', async () => {
    const page = await signIn(admin, 390);
    await fillRegistration(page, 'wrongpass', 'definitely-not-it-9876');
    await submitRegistration(page);
    const error = (await page.locator('#f-c0_password-error').textContent()) ?? '';
    expect(error).toMatch(/password authentication failed/);
    expect(await page.content()).not.toContain('definitely-not-it-9876');
    expect(await page.locator('input[name=save_anyway]').count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}register-wrong-password.png`, fullPage: true });
    await page.goto('/databases');
    expect(await page.locator('body').textContent()).not.toContain('wrongpass');
    await page.context().close();
  });

  it('asks before removing a protection rule, naming the people who lose it', async () => {
    const dbId = dbPath.split('/').pop()!;
    const res = await svc.fetch(`/api/v1/desk/databases/${dbId}/policies`, {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Payroll clerks',
        rules: [{ table: 'employees', column: 'ssn', action: 'mask' }],
        assignments: { users: [memberId] },
      }),
    });
    expect(res.status).toBe(201);
    const policyId = ((await res.json()) as { id: string }).id;
    const page = await signIn(admin, 390);
    await page.goto(`${dbPath}/policies/${policyId}`);
    await Promise.all([page.waitForNavigation(), page.click('form[action$="/rules/0/delete"] button')]);
    const asked = (await page.locator('main, body').first().textContent()) ?? '';
    expect(asked).toContain(`People who lose this protection: ${member.email}`);
    expect(asked).toContain(`${member.email} will see employees.ssn in clear`);
    await page.screenshot({ path: `${SHOTS}confirm-remove-rule.png`, fullPage: true });
    // Nothing changed yet.
    const rules = async () =>
      (
        await svc.deps.sql<{ n: number }[]>`
        select count(*)::int as n from data_protection_rules where policy_id = ${policyId}`
      )[0]!.n;
    expect(await rules()).toBe(1);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Remove the rule")')]);
    expect(await page.locator('.notice').textContent()).toContain('Rule removed');
    expect(await rules()).toBe(0);
  });
});
