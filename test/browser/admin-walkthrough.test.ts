// A fresh admin in dev mode, in Debian's Chromium, with no REST call or CLI
// step — sign in, register a database with a reviewed and an unreviewed credential, invite a
// reviewer and a member, give the member one credential only, define a policy and check its
// preview, then the member's masked query, a review with a comment, a rejection the author reads,
// and an edit that voids an approval. Every page is saved at 1366×900 and 390×844 (into
// docs/screenshots/ with UPDATE_SCREENSHOTS=1, else test-output/screenshots/).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevHandle, startDev } from '../../cli/dev.ts';
import { loadConfig } from '../../config/env.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { freePort } from '../helpers/service.ts';

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots/' : 'test-output/screenshots/';
const TABLE = `customers_${Date.now().toString(36)}`;
const READER = `shop_reader_${Date.now().toString(36)}`;
const READER_PASSWORD = 'reader password 1';

let dev: DevHandle;
let dataDir: string;
let browser: Browser;
let printed = '';
let dbPath = '';
let policyPath = '';
const people = {
  admin: { email: '', password: '' },
  reviewer: { email: 'rita.reviewer@shop.example', password: 'rita password 123' },
  member: { email: 'max.member@shop.example', password: 'max password 1234' },
};

const target = withHarnessPostgres;

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  await target(async (sql) => {
    await sql.unsafe(`create table ${TABLE} (id int primary key, name text, email text, ssn text)`);
    await sql.unsafe(
      `insert into ${TABLE} values (1, 'Ada', 'ada@shop.example', '111-22-3333'), (2, 'Bo', 'bo@shop.example', '222-33-4444')`,
    );
    await sql.unsafe(`create role ${READER} login password '${READER_PASSWORD}'`);
    await sql.unsafe(`grant select on ${TABLE} to ${READER}`);
  });
  dataDir = await mkdtemp(join(tmpdir(), 'cs-walk-'));
  const out = new Writable({
    write(chunk, _e, done) {
      printed += String(chunk);
      done();
    },
  });
  // A known port: the public URL (sign-in's Origin check, links) must be the real address.
  const port = String(await freePort());
  dev = await startDev(loadConfig({ COUNTERSIGN_DATA_DIR: dataDir, PORT: port, LOG_LEVEL: 'warn' }), out);
  people.admin.email = /Super admin: +(\S+)/.exec(printed)![1]!;
  people.admin.password = /Password: +(\S+)/.exec(printed)![1]!;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  await rm(dataDir, { recursive: true, force: true });
  await target(async (sql) => {
    await sql.unsafe(`drop table if exists ${TABLE}`);
    await sql.unsafe(`drop owned by ${READER}; drop role if exists ${READER}`);
  }).catch(() => {});
});

const pages: Record<string, Page> = {};

async function signIn(who: keyof typeof people): Promise<Page> {
  const context = await browser.newContext({ baseURL: dev.apiUrl, viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  await page.goto('/login');
  await page.fill('#email', people[who].email);
  await page.fill('#password', people[who].password);
  await Promise.all([
    page.waitForURL(/\/dashboards/),
    page.click('form[action="/login"] button[type=submit]'),
  ]);
  pages[who] = page;
  return page;
}

/** Submits the form that holds `selector`'s button and waits for the next page. */
async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.waitForNavigation(), page.click(button)]);
}

describe('an admin sets Countersign up in the web UI', () => {
  it('signs in with the printed password and registers a database with two credentials', async () => {
    const page = await signIn('admin');
    await page.click('nav >> text=Databases');
    expect((await page.locator('h1').textContent())?.trim()).toBe('Databases');
    await page.click('text=Register a database');
    const pg = servers().postgres;
    await page.fill('#f-name', 'shop');
    await page.selectOption('#f-adapter', 'postgres');
    await page.fill('#f-hostname', pg.host);
    await page.fill('#f-port', String(pg.port));
    await page.fill('#f-database', pg.database);
    // The form starts restricted to its registrant; this shop opens it to everyone.
    await page.uncheck('input[name=restrict_access]');
    await page.fill('#f-c0_username', pg.user);
    await page.fill('#f-c0_password', pg.password);
    await page.fill('#f-c0_reviews_required', '1');
    await page.check('input[name=c0_restrict_access]');
    await page.fill('#f-c1_username', READER);
    await page.fill('#f-c1_password', READER_PASSWORD);
    await page.fill('#f-c1_reviews_required', '0');
    await page.check('input[name=c1_restrict_access]');
    await submit(page, 'form[action="/databases"] button[type=submit]');
    expect(await page.locator('.notice').textContent()).toContain('Registered shop');
    dbPath = new URL(page.url()).pathname;
    await page.locator('text=1 approval(s)').first().waitFor();
    // Both credentials connect.
    for (const i of [0, 1]) {
      await submit(page, `.card >> nth=${i} >> text=Check connection`);
      await page.locator('.notice', { hasText: 'Connected: ok.' }).first().waitFor();
    }
  });

  it('invites a reviewer and a member, who choose their passwords through their links', async () => {
    const page = pages.admin!;
    for (const who of ['reviewer', 'member'] as const) {
      await page.goto('/people');
      await page.fill('#invite-email', people[who].email);
      await page.selectOption('#invite-role', 'member');
      await submit(page, 'form[action="/people"] button[type=submit]');
      const link = ((await page.locator('#setup-link').textContent()) ?? '').trim();
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const invited = await context.newPage();
      await invited.goto(link);
      await invited.fill('#password', people[who].password);
      // Choosing the password signs them in.
      await Promise.all([invited.waitForURL(/\/dashboards/), invited.click('button[type=submit]')]);
      expect(await invited.locator('body').textContent()).toContain(people[who].email);
      await context.close();
    }
    await page.goto('/people');
    expect(await page.locator('.badge', { hasText: 'active' }).count()).toBe(3);
  });

  it('gives the member the reviewed credential only, and the reviewer the unreviewed one', async () => {
    const page = pages.admin!;
    await page.goto(dbPath);
    const cards = page.locator('.card[id^=cred-]');
    for (const [i, who] of [
      [0, 'member'],
      [1, 'reviewer'],
    ] as const) {
      const card = cards.nth(i);
      // A restricted credential's list opens by itself; make sure it is open either way.
      await card.locator('details', { hasText: 'Who may use it' }).evaluate((d) => {
        (d as HTMLDetailsElement).open = true;
      });
      await card.locator('select[name=grantee]').selectOption({ label: people[who].email });
      await submit(page, `.card[id^=cred-] >> nth=${i} >> button:has-text("Grant")`);
      expect(await page.locator('.notice').textContent()).toContain('Granted');
    }
  });

  it('defines a policy and previews what the member sees', async () => {
    const page = pages.admin!;
    await page.goto(dbPath);
    await page.click('text=Data protection policies');
    await page.fill('#policy-name', 'Shop staff');
    await submit(page, 'form >> button:has-text("Create")');
    policyPath = new URL(page.url()).pathname;
    for (const [column, action] of [
      ['id', 'show'],
      ['name', 'show'],
      ['email', 'mask'],
    ]) {
      await page.selectOption('#rule-table', `public.${TABLE}`);
      await page.fill('#rule-column', column!);
      await page.selectOption('#rule-action', action!);
      await submit(page, 'button:has-text("Add rule")');
    }
    await page.check('input[name=role_member]');
    await submit(page, 'button:has-text("Save assignments")');
    await page.selectOption('#preview-user', { label: `${people.member.email} (member)` });
    await page.selectOption('#preview-table', `public.${TABLE}`);
    await submit(page, 'button:has-text("Preview")');
    const result = page.locator('#preview-result');
    expect(await result.textContent()).toContain('Shop staff');
    expect(await result.locator('tr', { hasText: 'email' }).textContent()).toContain('masked');
    expect(await result.locator('tr', { hasText: 'ssn' }).textContent()).toContain('hidden by default');
  });

  it('the member queries through review and sees the masked result', async () => {
    const member = await signIn('member');
    await member.goto('/console');
    // One credential only: the reviewed one.
    expect(await member.locator('#credential option').count()).toBe(1);
    await member.fill('#console-form .cm-content', `select * from ${TABLE} order by id`);
    await member.fill('#justification', 'SUP-7: checking the two test customers');
    await submit(member, 'form[action="/console"] button[type=submit]');
    expect(await member.locator('body').textContent()).toContain('review');
    const reviewer = await signIn('reviewer');
    await reviewer.goto('/reviews');
    const card = reviewer.locator('article').first();
    expect(await card.textContent()).toContain('SUP-7');
    await card.locator('input[name=comment]').fill('Looks fine; read only.');
    await submit(reviewer, 'article >> nth=0 >> button[value=approve]');
    await member.goto('/reviews');
    expect(await member.locator('article').first().textContent()).toContain('Looks fine; read only.');
    await submit(member, 'article >> nth=0 >> button:has-text("Run")');
    const table = member.locator('.result-table');
    expect(await table.textContent()).toContain('****');
    expect(await table.textContent()).not.toContain('ada@shop.example');
    expect(await table.textContent()).not.toContain('111-22-3333');
  });

  it('a rejection the author reads, and an edit that voids an approval', async () => {
    const member = pages.member!;
    const reviewer = pages.reviewer!;
    for (const statement of [`select name from ${TABLE}`, `select id from ${TABLE}`]) {
      await member.goto('/console');
      await member.fill('#console-form .cm-content', statement);
      await member.fill('#justification', 'follow-up');
      await submit(member, 'form[action="/console"] button[type=submit]');
    }
    await reviewer.goto('/reviews');
    const named = reviewer.locator('article', { hasText: `select name from ${TABLE}` });
    await named.locator('input[name=comment]').fill('Use the report instead.');
    await Promise.all([reviewer.waitForNavigation(), named.locator('button[value=reject]').click()]);
    const ids = reviewer.locator('article', { hasText: `select id from ${TABLE}` });
    await Promise.all([reviewer.waitForNavigation(), ids.locator('button[value=approve]').click()]);

    await member.goto('/reviews');
    const rejected = member.locator('article', { hasText: `select name from ${TABLE}` });
    expect(await rejected.textContent()).toContain('rejected');
    expect(await rejected.textContent()).toContain('Use the report instead.');
    const approved = member.locator('article', { hasText: `select id from ${TABLE}` });
    await approved.locator('summary', { hasText: 'Edit the SQL' }).click();
    await approved.locator('textarea[name=statement]').fill(`select id, name from ${TABLE}`);
    await Promise.all([
      member.waitForNavigation(),
      approved.locator('button:has-text("Save new revision")').click(),
    ]);
    await reviewer.goto('/reviews');
    const edited = reviewer.locator('article', { hasText: `select id, name from ${TABLE}` });
    expect(await edited.textContent()).toContain('voided 1 approval(s)');
    expect(await edited.locator('.diff-added').textContent()).toContain(`select id, name from ${TABLE}`);
  });

  it('saves every page at laptop and phone size', async () => {
    const shots: Array<[keyof typeof people, string, string]> = [
      ['admin', '/databases', 'databases'],
      ['admin', '/databases/new', 'database-new'],
      ['admin', dbPath, 'database'],
      ['admin', `${policyPath}?as=&table=`, 'policies'],
      ['admin', '/people', 'people'],
      ['admin', '/organization', 'organization'],
      ['member', '/console', 'console'],
      ['member', '/reviews', 'reviews-author'],
      ['reviewer', '/reviews', 'reviews-reviewer'],
      ['admin', '/settings', 'settings'],
    ];
    for (const [width, height, suffix] of [
      [1366, 900, 'laptop'],
      [390, 844, 'phone'],
    ] as const) {
      for (const [who, path, name] of shots) {
        const page = pages[who]!;
        await page.setViewportSize({ width, height });
        await page.goto(path);
        await page.screenshot({ path: `${SHOTS}${name}-${suffix}.png`, fullPage: true });
      }
    }
  });
});
