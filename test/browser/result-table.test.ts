// Result tables, in Debian's Chromium: a long result shows its first rows and
// reveals the rest on demand, the header stays in view, numbers align right, and the CSV a person
// downloads holds exactly what they were shown — masked values stay masked.
import { readFile } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
const TABLE = `long_${Date.now()}`;
const person = { email: 'analyst@example.test', password: 'analyst password 1' };
let dbId: string;

const target = withHarnessPostgres;

beforeAll(async () => {
  svc = await startTestService();
  await target(async (sql) => {
    await sql`create table ${sql(TABLE)} (id int, email text, note text)`;
    await sql`insert into ${sql(TABLE)} select g, 'user' || g || '@example.test', '=1+1, "quoted"' from generate_series(1, 450) g`;
  });
  const pg = servers().postgres;
  const api = (method: string, path: string, body: unknown) =>
    svc.fetch(path, {
      method,
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  dbId = (
    (await (
      await api('POST', '/api/v1/desk/databases', {
        name: 'long',
        adapter: 'postgres',
        hostname: pg.host,
        port: pg.port,
        database: pg.database,
        credentials: [
          { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
        ],
      })
    ).json()) as { id: string }
  ).id;
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  const user = await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: person.email,
    role: 'member',
    password: person.password,
  });
  const policy = await api('POST', `/api/v1/desk/databases/${dbId}/policies`, {
    name: 'analysts',
    rules: [
      { table: TABLE, column: 'id', action: 'show' },
      { table: TABLE, column: 'email', action: 'mask' },
      { table: TABLE, column: 'note', action: 'show' },
    ],
    assignments: { users: [user.id] },
  });
  expect(policy.status).toBe(201);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await target((sql) => sql`drop table if exists ${sql(TABLE)}`);
});

describe('result tables', () => {
  it('pages a long result, keeps the header, and exports only what the viewer saw', async () => {
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1366, height: 900 },
    });
    const page = await context.newPage();
    await page.goto(`${svc.url}/login`);
    await page.fill('#email', person.email);
    await page.fill('#password', person.password);
    await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
    await page.goto(`${svc.url}/console`);
    await page.selectOption('select[name=credential]', { index: 0 });
    await page.fill('#console-form .cm-content', `select id, email, note from ${TABLE} order by id`);
    await Promise.all([
      page.waitForLoadState('load'),
      page.click('form[action="/console"] button[type=submit]'),
    ]);
    const visible = () => page.locator('.result-table tbody tr:not([hidden])').count();
    expect(await visible()).toBe(200);
    await page.click('button[data-more]');
    expect(await visible()).toBe(400);
    await page.click('button[data-more]');
    expect(await visible()).toBe(450);
    expect(await page.locator('button[data-more]').count()).toBe(0);
    // Numbers align right; the header sticks.
    expect(
      await page
        .locator('.result-table tbody td')
        .first()
        .evaluate((td) => getComputedStyle(td).textAlign),
    ).toBe('right');
    expect(
      await page
        .locator('.result-table thead th')
        .first()
        .evaluate((th) => getComputedStyle(th).position),
    ).toBe('sticky');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button[data-csv]')]);
    const csv = await readFile((await download.path())!, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,email,note');
    expect(lines).toHaveLength(451);
    expect(lines[1]).toBe(`1,****,"'=1+1, ""quoted"""`);
    expect(csv).not.toContain('@example.test');
    await page.screenshot({ path: 'test-output/screenshots/console-long-result.png' });
    await context.close();
  });
});
