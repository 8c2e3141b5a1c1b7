// Governed writes in Debian's Chromium: a member under a data-protection policy submits a harmless
// UPDATE from the console (it waits for review) and an exfiltrating one (refused at once, the
// column named); a reviewer under the same policy sees the preview on the review page — the
// exact count, the row before and after — with the protected column masked.
import { mkdir } from 'node:fs/promises';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SHOT = '/work/notes/shots/writes/review-preview.png';
let svc: TestService;
let browser: Browser;
const TABLE = `customers_${Date.now().toString(36)}`;
const author = { email: 'ann.author@example.test', password: 'author password 1' };
const reviewer = { email: 'rob.reviewer@example.test', password: 'reviewer password 1' };

beforeAll(async () => {
  svc = await startTestService();
  await withHarnessPostgres(async (sql) => {
    await sql`create table ${sql(TABLE)} (id int primary key, name text, email text)`;
    await sql`insert into ${sql(TABLE)} values (1, 'Ada', 'ada@shop.example'), (2, 'Bo', 'bo@shop.example')`;
  });
  const pg = servers().postgres;
  const api = (method: string, path: string, body: unknown) =>
    svc.fetch(path, {
      method,
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const db = (await (
    await api('POST', '/api/v1/desk/databases', {
      name: 'shop',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 1, default_credential: true },
      ],
    })
  ).json()) as { id: string };
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  for (const p of [author, reviewer])
    await createUser(svc.deps.sql, { orgId: org!.id, email: p.email, role: 'member', password: p.password });
  const policy = await api('POST', `/api/v1/desk/databases/${db.id}/policies`, {
    name: 'members',
    rules: [
      { table: TABLE, column: 'id', action: 'show' },
      { table: TABLE, column: 'name', action: 'show' },
      { table: TABLE, column: 'email', action: 'mask' },
    ],
    assignments: { roles: ['member'] },
  });
  expect(policy.status).toBe(201);
  await mkdir('/work/notes/shots/writes', { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await withHarnessPostgres((sql) => sql`drop table if exists ${sql(TABLE)}`);
});

async function signIn(person: { email: string; password: string }): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${svc.url}/login`);
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
  return page;
}

async function submit(page: Page, statement: string): Promise<string> {
  await page.goto(`${svc.url}/console`);
  await page.selectOption('select[name=credential]', { index: 0 });
  // The console's editor (CodeMirror) stands in for the plain textarea when scripts run.
  await page.fill('#console-form .cm-content', statement);
  await Promise.all([
    page.waitForLoadState('load'),
    page.click('form[action="/console"] button[type=submit]'),
  ]);
  return text(page.locator('main'));
}

// biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a person reads.
const text = (l: Locator) => l.innerText();

describe('governed writes in the console and on the review page', () => {
  it('a harmless write waits for review, an exfiltrating one is refused with the column named, the reviewer sees a masked preview', async () => {
    const page = await signIn(author);
    const refused = await submit(page, `update ${TABLE} set name = 'x' where email = 'ada@shop.example'`);
    expect(refused).toMatch(new RegExp(`${TABLE}\\.email`));
    expect(refused).toMatch(/WHERE clause/);
    const waiting = await submit(page, `update ${TABLE} set name = 'Renamed' where id = 1`);
    expect(waiting).toMatch(/review/i);
    await page.context().close();

    const rev = await signIn(reviewer);
    await rev.goto(`${svc.url}/reviews`);
    const card = rev.locator('article.card', { hasText: 'Renamed' });
    const preview = card.locator('section.preview');
    await expect.poll(() => preview.count()).toBe(1);
    expect(await preview.locator('[data-count]').getAttribute('data-count')).toBe('1');
    expect(await preview.locator('[data-risk]').getAttribute('data-risk')).toBe('ordinary');
    const tables = preview.locator('table.result-table');
    expect(await tables.count()).toBe(2);
    const before = await text(tables.nth(0).locator('tbody tr').first());
    const after = await text(tables.nth(1).locator('tbody tr').first());
    expect(before).toContain('Ada');
    expect(after).toContain('Renamed');
    for (const row of [before, after]) {
      expect(row).toContain('****');
      expect(row).not.toContain('ada@shop.example');
    }
    expect(await rev.content()).not.toContain('ada@shop.example');
    await card.scrollIntoViewIfNeeded();
    await rev.screenshot({ path: SHOT, fullPage: true });
    await rev.context().close();
  });
});
