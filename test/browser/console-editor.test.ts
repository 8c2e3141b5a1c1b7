// The query console as a person uses it, in Debian's Chromium: completion and a schema browser
// from the governed schema (protected columns labelled), Ctrl+Enter, history, saved and shared
// queries, labelled masked and hidden cells, rows affected by a write, the "needs review" state,
// and the plain form on a phone without scripts. Laptop and phone sizes.
import { mkdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SHOTS = '/work/notes/shots/workspace/';
let svc: TestService;
let browser: Browser;
const TABLE = `guarded_${Date.now()}`;
const WRITES = `writes_${Date.now()}`;
const member = { email: 'member@example.test', password: 'member password 1' };
const other = { email: 'other@example.test', password: 'other password 12' };
let guardedId: string;

const api = (method: string, path: string, body?: unknown) =>
  svc.fetch(path, {
    method,
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function register(name: string, credentials: unknown[]): Promise<string> {
  const pg = servers().postgres;
  const res = await api('POST', '/api/v1/desk/databases', {
    name,
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  svc = await startTestService();
  await withHarnessPostgres(async (sql) => {
    await sql`create table ${sql(TABLE)} (id int, name text, email text, secret text)`;
    await sql`insert into ${sql(TABLE)} values (1, 'Ada', 'ada@example.test', 's1'), (2, 'Bob', 'bob@example.test', null)`;
    await sql`create table ${sql(WRITES)} (id int, done boolean)`;
    await sql`insert into ${sql(WRITES)} values (1, false), (2, false), (3, true)`;
  });
  const pg = servers().postgres;
  guardedId = await register('guarded', [
    { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
  ]);
  await register('open', [
    { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    { username: 'reviewed', password: pg.password, reviews_required: 1, default_credential: false },
  ]);
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  const user = await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: member.email,
    role: 'member',
    password: member.password,
  });
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: other.email,
    role: 'member',
    password: other.password,
  });
  const policy = await api('POST', `/api/v1/desk/databases/${guardedId}/policies`, {
    name: 'support',
    rules: [
      { table: TABLE, column: 'id', action: 'show' },
      { table: TABLE, column: 'name', action: 'show' },
      { table: TABLE, column: 'email', action: 'mask' },
      { table: TABLE, column: 'secret', action: 'hide' },
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
  await withHarnessPostgres(async (sql) => {
    await sql`drop table if exists ${sql(TABLE)}`;
    await sql`drop table if exists ${sql(WRITES)}`;
  });
});

async function signIn(
  who: { email: string; password: string },
  viewport: { width: number; height: number },
  js = true,
) {
  const context = await browser.newContext({ viewport, javaScriptEnabled: js });
  const page = await context.newPage();
  await page.goto(`${svc.url}/login`);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
  return page;
}

async function choose(page: Page, dbName: string, username: string) {
  const value = await page
    .locator('#credential option', { hasText: `${dbName} as ${username}` })
    .first()
    .getAttribute('value');
  await page.selectOption('#credential', value!);
}

describe('the query console', () => {
  it('completes from the governed schema, runs with Ctrl+Enter, labels protected cells, keeps history', async () => {
    const page = await signIn(member, { width: 1366, height: 900 });
    await page.goto(`${svc.url}/console`);
    await choose(page, 'guarded', servers().postgres.user);
    // The schema browser lists the table; its protected columns carry their labels.
    const table = page.locator('#schema-tree > li', { hasText: TABLE });
    await table.waitFor();
    await table.locator('button.disclosure').click();
    await expect.poll(() => table.locator('button[data-column=email] .tag').textContent()).toBe('masked');
    expect(await table.locator('button[data-column=secret] .tag').textContent()).toBe('hidden');
    expect(await table.locator('button[data-column=name] .tag').count()).toBe(0);

    // Completion: the table's columns, with their type and protection.
    const editor = page.locator('.cm-content');
    await editor.click();
    await page.keyboard.type(`select id, ${TABLE}.em`);
    const option = page.locator('.cm-tooltip-autocomplete li', { hasText: 'email' });
    await option.waitFor();
    expect(await option.textContent()).toContain('masked');
    // CodeMirror ignores Enter for 75 ms after the list opens (its interactionDelay).
    await page.waitForTimeout(150);
    await page.keyboard.press('Enter');
    await page.keyboard.type(', ');
    // A click in the schema browser inserts the column name at the cursor.
    await table.locator('button[data-column=secret]').click();
    await page.keyboard.type(`, name from ${TABLE} order by id`);
    expect(await editor.textContent()).toBe(
      `select id, ${TABLE}.email, secret, name from ${TABLE} order by id`,
    );
    await page.screenshot({ path: `${SHOTS}console-completion-laptop.png`, fullPage: true });

    await Promise.all([page.waitForNavigation(), editor.press('Control+Enter')]);
    await page.locator('#outcome').waitFor();
    // Focus moves to the outcome, so a keyboard or screen-reader user lands on it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('outcome');
    const rows = page.locator('.result-table tbody tr');
    expect(await rows.count()).toBe(2);
    // Masked: the mask text, labelled. Hidden: labelled "hidden", never "null".
    const cells = (r: number) => rows.nth(r).locator('td');
    expect(await cells(0).nth(1).getAttribute('data-protection')).toBe('masked');
    expect(await cells(0).nth(1).textContent()).toContain('****');
    expect(await cells(0).nth(2).textContent()).toBe('hidden');
    expect(await cells(1).nth(2).textContent()).toBe('hidden');
    expect(await cells(0).nth(3).textContent()).toBe('Ada');
    expect(await page.locator('.result-table').textContent()).not.toContain('null');
    expect(await page.locator('.result-took').textContent()).toMatch(/^\d+ ms$|^\d+\.\d\d s$/);
    await page.screenshot({ path: `${SHOTS}console-result-laptop.png`, fullPage: true });

    // A selection runs alone; the editor keeps the whole text.
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(';\nselect count(*) as n from ');
    await page.keyboard.type(TABLE);
    await page.keyboard.down('Shift');
    for (let i = 0; i < 1; i++) await page.keyboard.press('Home');
    await page.keyboard.up('Shift');
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Control+Enter')]);
    await page.locator('#outcome').waitFor();
    expect(await page.locator('.result-table thead th').allTextContents()).toEqual(['n']);
    expect(await page.locator('.cm-content').textContent()).toContain(`${TABLE}.email`);

    // History: both statements, newest first, searchable, and one click loads one again.
    const history = page.locator('#history-list li');
    expect(await history.count()).toBe(2);
    expect(await history.first().textContent()).toContain('select count(*)');
    await page.fill('#history-search', 'email');
    await Promise.all([page.waitForLoadState('load'), page.press('#history-search', 'Enter')]);
    expect(await page.locator('#history-list li').count()).toBe(1);
    await Promise.all([page.waitForLoadState('load'), page.locator('#history-list li a').first().click()]);
    expect(await page.locator('.cm-content').textContent()).toBe(
      `select id, ${TABLE}.email, secret, name from ${TABLE} order by id`,
    );
    await page.context().close();
  });

  it('saves a query, shares it, and another person finds it; the API names bad fields', async () => {
    const page = await signIn(member, { width: 1366, height: 900 });
    await page.goto(`${svc.url}/console`);
    await choose(page, 'guarded', servers().postgres.user);
    await page.locator('.cm-content').click();
    await page.keyboard.type(`select name from ${TABLE}`);
    await page.click('.save-query summary');
    await page.fill('#save-name', 'Customer names');
    await page.check('#save-shared');
    await Promise.all([page.waitForURL(/saved=/), page.click('#save-form button[type=submit]')]);
    expect(await page.locator('p.notice').textContent()).toContain('Saved “Customer names”, shared');
    expect(await page.locator('.cm-content').textContent()).toBe(`select name from ${TABLE}`);
    await page.context().close();

    const second = await signIn(other, { width: 1366, height: 900 });
    await second.goto(`${svc.url}/console`);
    const shared = second.locator('section[aria-labelledby=saved-heading] li', { hasText: 'Customer names' });
    expect(await shared.textContent()).toContain(`by ${member.email}`);
    // Not theirs: no Delete for a member who did not save it.
    expect(await shared.locator('button', { hasText: 'Delete' }).count()).toBe(0);
    await Promise.all([second.waitForLoadState('load'), shared.locator('a').click()]);
    expect(await second.locator('.cm-content').textContent()).toBe(`select name from ${TABLE}`);
    await second.context().close();

    // REST: bad input is a 422 naming the field, and nothing is saved.
    const before = await (await api('GET', '/api/v1/saved-queries')).json();
    const bad = await api('POST', '/api/v1/saved-queries', { name: '', statement: 'select 1' });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.stringify(await bad.json())).toContain('name');
    expect(await (await api('GET', '/api/v1/saved-queries')).json()).toEqual(before);
  });

  it('shows rows affected by a write and the needs-review state before running', async () => {
    const page = await signIn(member, { width: 1366, height: 900 });
    await page.goto(`${svc.url}/console`);
    await choose(page, 'open', servers().postgres.user);
    expect(await page.locator('#review-note').isHidden()).toBe(true);
    await page.locator('.cm-content').click();
    await page.keyboard.type(`update ${WRITES} set done = true where not done`);
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Control+Enter')]);
    expect(await page.locator('#rows-affected').textContent()).toBe('UPDATE: 2 rows affected');
    expect(await page.locator('#outcome').textContent()).not.toContain('No rows');

    await choose(page, 'open', 'reviewed');
    expect(await page.locator('#review-note').isVisible()).toBe(true);
    expect(await page.locator('#run-button').textContent()).toBe('Submit for review');
    await page.screenshot({ path: `${SHOTS}console-needs-review-laptop.png`, fullPage: true });
    await page.context().close();
  });

  it('works as a plain form on a phone without scripts', async () => {
    const page = await signIn(member, { width: 390, height: 844 }, false);
    await page.goto(`${svc.url}/console`);
    await choose(page, 'guarded', servers().postgres.user);
    await page.fill('#statement', `select id, email from ${TABLE} order by id`);
    await Promise.all([page.waitForLoadState('load'), page.click('#run-button')]);
    expect(await page.locator('.result-table tbody tr').count()).toBe(2);
    expect(await page.locator('.result-table tbody tr td[data-protection=masked]').count()).toBe(2);
    // Nothing wider than the phone's screen but the result's own scroll box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}console-phone-noscript.png`, fullPage: true });
    await page.context().close();
  });

  it('keeps the editor script under 300 KB compressed, under the strict CSP', async () => {
    const res = await svc.fetch('/assets/sql-editor.js');
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(gzipSync(body).length).toBeLessThanOrEqual(300 * 1024);
    const page = await signIn(member, { width: 390, height: 844 });
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${svc.url}/console`);
    await page.locator('.cm-content').waitFor();
    await page.locator('#schema-tree > li').first().waitFor();
    expect(violations).toEqual([]);
    await page.screenshot({ path: `${SHOTS}console-phone.png`, fullPage: true });
    await page.context().close();
  });
});
