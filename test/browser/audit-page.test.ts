// The audit page in Debian's Chromium: an admin narrows the log by day and event type, reads what a
// policy rule change changed (before and after), and verifies the hash chain — OK, then broken
// after a row is altered directly in the store.
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let orgId: string;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await svc.fetch(path, {
    method,
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
};

beforeAll(async () => {
  svc = await startTestService();
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  orgId = org!.id;
  const pg = servers().postgres;
  const db = await api('POST', '/api/v1/desk/databases', {
    name: 'crm',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials: [{ username: pg.user, password: pg.password }],
  });
  const policy = await api('POST', `/api/v1/desk/databases/${db.id}/policies`, {
    name: 'support',
    rules: [{ table: 'users', column: 'ssn', action: 'mask' }],
  });
  await api('PATCH', `/api/v1/desk/databases/${db.id}/policies/${policy.id}`, {
    rules: [{ table: 'users', column: 'ssn', action: 'partial', keep_last: 4 }],
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

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe('the audit page', () => {
  it('filters by day and type, shows a rule change before/after, and verifies the chain', async () => {
    const context = await browser.newContext({ baseURL: svc.url });
    const page = await context.newPage();
    await page.goto('/login');
    await page.fill('#email', svc.admin.email);
    await page.fill('#password', svc.admin.password);
    await Promise.all([
      page.waitForURL(/\/dashboards/),
      page.click('form[action="/login"] button[type=submit]'),
    ]);
    await page.goto('/audit');

    const search = async (type: string, from: string, to: string) => {
      await page.selectOption('#type', type);
      await page.fill('#from', from);
      await page.fill('#to', to);
      await Promise.all([page.waitForNavigation(), page.click('form.card button[type=submit]')]);
    };

    await search('policy.updated', day(0), day(0));
    const rows = page.locator('#audit-entries > tbody > tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('policy.updated');
    await page.click('.what-changed summary');
    const change = page.locator('.what-changed tbody tr', { hasText: 'rule users.ssn' });
    const cells = await change.locator('td').allTextContents();
    expect(cells).toEqual([
      'rule users.ssn',
      '{"action":"mask"}',
      '{"action":"partial","keep_first":0,"keep_last":4}',
    ]);
    await page.screenshot({ path: '/work/notes/shots/decisions/audit-rule-change.png', fullPage: true });

    // A day with nothing of that kind, and a type that holds other entries.
    await search('policy.updated', day(1), day(1));
    expect(await page.locator('#audit-entries > tbody > tr').count()).toBe(0);
    expect(await page.textContent('main')).toContain('No entry matches.');
    await search('database.created', day(0), day(0));
    expect(await page.locator('#audit-entries > tbody > tr').count()).toBe(1);
    expect(await page.locator('#audit-entries > tbody > tr').first().textContent()).toContain(
      'database.created',
    );

    await Promise.all([page.waitForNavigation(), page.click('#verify-chain')]);
    expect(await page.textContent('#chain-result')).toMatch(/Chain OK: \d+ entries verify/);

    // Someone with access to the store rewrites what the rule was.
    await svc.deps.sql`alter table audit_log disable trigger user`;
    const [altered] = await svc.deps.sql<{ seq: string }[]>`
      update audit_log set subject = jsonb_set(subject, '{before}', '{}'::jsonb)
      where org_id = ${orgId} and event = 'policy.updated' returning seq::text`;
    await svc.deps.sql`alter table audit_log enable trigger user`;
    await Promise.all([page.waitForNavigation(), page.click('#verify-chain')]);
    const result = await page.textContent('#chain-result');
    expect(result).toContain(`Chain broken at entry ${altered!.seq}`);
    expect(result).toContain('altered');
    await page.screenshot({ path: '/work/notes/shots/decisions/audit-chain-broken.png', fullPage: true });
    await context.close();
  });
});
