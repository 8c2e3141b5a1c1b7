import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { axe, type Violation } from '../helpers/axe.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let dbId: string;
let requestId: string;

beforeAll(async () => {
  svc = await startTestService();
  // Two credentials: the database page then repeats the credential form.
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'orders',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        { username: 'second', password: pg.password, reviews_required: 1, default_credential: false },
      ],
    }),
  });
  expect(res.status).toBe(201);
  dbId = ((await res.json()) as { id: string }).id;
  // A request waiting for review: its page is headed by its id, which has no break opportunity.
  const second = (await (
    await svc.fetch(`/api/v1/desk/databases/${dbId}`, { headers: { 'x-api-key': svc.apiKey } })
  ).json()) as { credentials: Array<{ id: string; username: string }> };
  const submitted = await svc.fetch('/api/v1/desk/query-requests', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      database_id: dbId,
      credential_id: second.credentials.find((c) => c.username === 'second')!.id,
      statement: 'select 1',
    }),
  });
  expect(submitted.status).toBe(202);
  requestId = ((await submitted.json()) as { request: { id: string } }).request.id;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

const PAGES = () => [
  '/dashboards',
  '/console',
  '/databases',
  `/databases/${dbId}`,
  '/reviews',
  `/reviews/${requestId}`,
  '/workflows',
  '/runs',
  '/audit',
  '/people',
  '/organization',
  '/settings',
  '/settings/ai',
];

describe('accessibility', () => {
  for (const viewport of [
    { name: 'laptop', width: 1366, height: 900 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`has no serious axe violation on any page (${viewport.name})`, async () => {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(`${svc.url}/login`);
      const found: Record<string, Violation[]> = {};
      // Pages wider than the viewport scroll sideways: on a phone the whole page moves.
      const wide: Record<string, number> = {};
      const atLogin = await axe(page);
      if (atLogin.length) found['/login'] = atLogin;
      await page.fill('#email', svc.admin.email);
      await page.fill('#password', svc.admin.password);
      await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
      for (const path of PAGES()) {
        await page.goto(`${svc.url}${path}`);
        await page.waitForLoadState('load');
        const v = await axe(page);
        if (v.length) found[path] = v;
        const over = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        if (over > 0) wide[path] = over;
      }
      expect(found).toEqual({});
      expect(wide).toEqual({});
      await context.close();
    });
  }

  it('offers a skip link, shows the focus ring, and keeps repeated form ids unique', async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${svc.url}/login`);
    await page.fill('#email', svc.admin.email);
    await page.fill('#password', svc.admin.password);
    await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
    await page.goto(`${svc.url}/databases/${dbId}`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).toBe('solid');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    // Every label points at a field of its own form, and no id repeats.
    const ids = await page.evaluate(() => [...document.querySelectorAll('[id]')].map((e) => e.id));
    expect(ids.length).toBe(new Set(ids).size);
    const stray = await page.evaluate(() =>
      [...document.querySelectorAll('label[for]')]
        .filter((l) => {
          const target = document.getElementById(l.getAttribute('for')!);
          return !target || target.closest('form') !== l.closest('form');
        })
        .map((l) => l.getAttribute('for')),
    );
    expect(stray).toEqual([]);
    // The audit log's filters stay in the tab order: none is taken for a submit's answer
    // (app.js focuses #outcome after a submit).
    await page.goto(`${svc.url}/audit`);
    expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe('SELECT');
    expect(await page.getAttribute('select[name=outcome]', 'tabindex')).toBeNull();
    await context.close();
  });
});
