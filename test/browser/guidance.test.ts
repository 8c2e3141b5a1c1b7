// First-run guidance and the policy preview with data, in Debian's Chromium at laptop and phone
// sizes: the checklist above an admin's dashboards ticks "Register a database" once one is
// registered through the page (and stays hidden for whoever dismissed it); the policy preview runs
// `select *` on a table as the chosen person through the governed pipeline — masked cells for a
// member under a policy, clear values for an admin, the reason for a person without access —
// and each preview is a `policy.previewed` audit entry. axe finds no serious violation on the pages.
import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { axe } from '../helpers/axe.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SHOTS = '/work/notes/shots/workspace2/';
const TABLE = `guide_people_${newId('db').slice(-8).toLowerCase()}`;
const LAPTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

let svc: TestService;
let browser: Browser;
let target: postgres.Sql;
let orgId: string;
const contexts: BrowserContext[] = [];
const password = `pw-${newId('usr').slice(-12)}`;
const member = { email: 'mia.member@example.test', password, id: '' };
const other = { email: 'otto.admin@example.test', password, id: '' };
let dbId = '';

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  const pg = servers().postgres;
  target = postgres({ ...pg, username: pg.user, max: 1, onnotice: () => {} });
  await target.unsafe(`create table ${TABLE} (id int primary key, name text not null, email text not null)`);
  await target.unsafe(
    `insert into ${TABLE} values (1, 'Ada', 'ada@example.test'), (2, 'Bo', 'bo@example.test'), (3, 'Cy', 'cy@example.test')`,
  );
  svc = await startTestService();
  orgId = (await firstOrganization(svc.deps.sql))!.id;
  member.id = (await createUser(svc.deps.sql, { orgId, role: 'member', ...member })).id;
  other.id = (await createUser(svc.deps.sql, { orgId, role: 'admin', ...other })).id;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--no-first-run'],
  });
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await svc?.stop();
  await target?.unsafe(`drop table if exists ${TABLE}`);
  await target?.end();
});

async function signIn(who: { email: string; password: string }, viewport = LAPTOP): Promise<Page> {
  const context = await browser.newContext({ viewport, baseURL: svc.url });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto('/login');
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL(/\/dashboards/), page.click('main button[type=submit]')]);
  return page;
}

const step = (page: Page, id: string) => page.locator(`#first-run li[data-step="${id}"]`);

describe('the first-run checklist', () => {
  it('shows an admin what is left and ticks "Register a database" once one is registered', async () => {
    const admin = await signIn(svc.admin);
    await expect.poll(() => step(admin, 'database').getAttribute('data-done')).toBe('no');
    // Two people were made in beforeAll: "Invite people" is done already, from the store's state.
    expect(await step(admin, 'people').getAttribute('data-done')).toBe('yes');
    expect(await admin.locator('#first-run').textContent()).toContain('1 of 6 steps done');
    // Each step links to the page that does it.
    expect(await step(admin, 'database').locator('a').getAttribute('href')).toBe('/databases');
    expect(await step(admin, 'ai').locator('a').getAttribute('href')).toBe('/settings/ai');
    expect(await step(admin, 'workflow').locator('a').getAttribute('href')).toBe('/workflows/new');

    await Promise.all([admin.waitForURL('**/databases'), step(admin, 'database').locator('a').click()]);
    await admin.click('text=Register a database');
    const pg = servers().postgres;
    await admin.fill('#f-name', 'people');
    await admin.selectOption('#f-adapter', 'postgres');
    await admin.fill('#f-hostname', pg.host);
    await admin.fill('#f-port', String(pg.port));
    await admin.fill('#f-database', pg.database);
    await admin.uncheck('input[name=restrict_access]');
    await admin.fill('#f-c0_username', pg.user);
    await admin.fill('#f-c0_password', pg.password);
    await admin.fill('#f-c0_reviews_required', '0');
    await Promise.all([
      admin.waitForURL(/\/databases\/db_/),
      admin.click('form[action="/databases"] button[type=submit]'),
    ]);
    dbId = new URL(admin.url()).pathname.split('/')[2]!;

    await admin.goto('/dashboards');
    expect(await step(admin, 'database').getAttribute('data-done')).toBe('yes');
    expect(await step(admin, 'policy').getAttribute('data-done')).toBe('no');
    expect(await admin.locator('#first-run').textContent()).toContain('2 of 6 steps done');
    expect(await step(admin, 'policy').locator('a').getAttribute('href')).toBe(`/databases/${dbId}/policies`);
    expect(await axe(admin)).toEqual([]);
    await admin.screenshot({ path: `${SHOTS}first-run-checklist.png`, fullPage: true });

    const phone = await signIn(svc.admin, PHONE);
    expect(await step(phone, 'database').getAttribute('data-done')).toBe('yes');
    expect(await axe(phone)).toEqual([]);
    await phone.screenshot({ path: `${SHOTS}first-run-checklist-phone.png`, fullPage: true });
  });

  it('is for admins, and stays hidden for the admin who dismissed it', async () => {
    const m = await signIn(member);
    expect(await m.locator('#first-run').count()).toBe(0);

    const otto = await signIn(other);
    await otto.locator('#first-run').waitFor();
    await Promise.all([otto.waitForURL(/notice=/), otto.click('#first-run button[type=submit]')]);
    expect(await otto.locator('#first-run').count()).toBe(0);
    await otto.goto('/dashboards');
    expect(await otto.locator('#first-run').count()).toBe(0);
    // Someone else's dismissal is theirs alone.
    const root = await signIn(svc.admin);
    expect(await root.locator('#first-run').count()).toBe(1);
  });
});

describe('the policy preview with data', () => {
  let admin: Page;

  /** Picks the person and the table and runs the preview; returns the rows' card. */
  async function preview(page: Page, personId: string) {
    await page.selectOption('#preview-user', personId);
    await page.selectOption('#preview-table', `public.${TABLE}`);
    await Promise.all([page.waitForURL(/\/policies/), page.click('#preview button[type=submit]')]);
    return page.locator('#preview-rows');
  }

  async function previewed(userId: string) {
    return svc.deps.sql<{ actor_user_id: string; outcome: string; subject: Record<string, unknown> }[]>`
      select actor_user_id, outcome, subject from audit_log
      where org_id = ${orgId} and event = 'policy.previewed' and subject->>'user_id' = ${userId}
      order by seq`;
  }

  it('shows a member under a policy masked values and an admin clear ones, each preview audited', async () => {
    const headers = { 'x-api-key': svc.apiKey, 'content-type': 'application/json' };
    const created = await svc.fetch(`/api/v1/desk/databases/${dbId}/policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'Support',
        rules: [
          { schema: 'public', table: TABLE, column: 'id', action: 'show' },
          { schema: 'public', table: TABLE, column: 'name', action: 'show' },
          { schema: 'public', table: TABLE, column: 'email', action: 'mask' },
        ],
        assignments: { users: [member.id], roles: [] },
      }),
    });
    expect(created.status).toBe(201);

    admin = await signIn(svc.admin);
    await admin.goto(`/databases/${dbId}/policies`);
    const rows = await preview(admin, member.id);
    await rows.waitFor();
    expect(await rows.textContent()).toContain('Under policy “Support”');
    const masked = rows.locator('td[data-protection="masked"]');
    expect(await masked.count()).toBe(3);
    expect(await rows.textContent()).not.toContain('ada@example.test');
    expect(await rows.textContent()).toContain('Ada');
    expect(await axe(admin)).toEqual([]);
    await admin.screenshot({ path: `${SHOTS}policy-preview.png`, fullPage: true });

    const audited = await previewed(member.id);
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actor_user_id: await adminId(), outcome: 'allowed' });
    expect(audited[0]!.subject).toMatchObject({ database_id: dbId, table: `public.${TABLE}`, rows: 3 });
    // The query it ran is the pipeline's own entry, as the member, under their policy.
    const [query] = await svc.deps.sql<{ actor_user_id: string; statement: string; outcome: string }[]>`
      select actor_user_id, statement, outcome from audit_log where id = ${String(audited[0]!.subject.query_audit_id)}`;
    expect(query).toMatchObject({ actor_user_id: member.id, outcome: 'allowed' });
    expect(query!.statement).toContain(TABLE);

    const asAdmin = await preview(admin, await adminId());
    expect(await asAdmin.textContent()).toContain('ada@example.test');
    expect(await asAdmin.locator('td[data-protection]').count()).toBe(0);
    expect(await previewed(await adminId())).toHaveLength(1);

    const phone = await signIn(svc.admin, PHONE);
    await phone.goto(`/databases/${dbId}/policies`);
    const onPhone = await preview(phone, member.id);
    expect(await onPhone.locator('td[data-protection="masked"]').count()).toBe(3);
    expect(await axe(phone)).toEqual([]);
    await phone.screenshot({ path: `${SHOTS}policy-preview-phone.png`, fullPage: true });
  });

  it('answers the same through REST: rows and marks for an admin, 422 naming a bad table, 403 for a member', async () => {
    const ask = (headers: Record<string, string>, body: unknown) =>
      svc.fetch(`/api/v1/desk/databases/${dbId}/policies/preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const key = { 'x-api-key': svc.apiKey };
    const res = await ask(key, { user_id: member.id, table: `public.${TABLE}` });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      status: string;
      columns: string[];
      marks: unknown[];
      rows: unknown[][];
    };
    expect(body).toMatchObject({
      status: 'rows',
      columns: ['id', 'name', 'email'],
      marks: [null, null, 'mask'],
    });
    expect(body.rows).toHaveLength(3);
    expect(JSON.stringify(body.rows)).not.toContain('ada@example.test');
    const bad = await ask(key, { user_id: member.id, table: 'public.no_such_table' });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('table');
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: member.id,
      name: 't',
      expiresAt: null,
    });
    const refused = await ask(
      { authorization: `Bearer ${secret}` },
      { user_id: member.id, table: `public.${TABLE}` },
    );
    expect(refused.status).toBe(403);
  });

  it('gives the reason instead of rows for a person without access to the database', async () => {
    const res = await svc.fetch(`/api/v1/desk/databases/${dbId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ restrict_access: true }),
    });
    expect(res.status).toBe(200);
    await admin.goto(`/databases/${dbId}/policies`);
    const rows = await preview(admin, member.id);
    expect(await rows.textContent()).toContain('has no access to people');
    expect(await rows.locator('td').count()).toBe(0);
    const audited = await previewed(member.id);
    expect(audited.at(-1)).toMatchObject({ outcome: 'denied', subject: { rows: null } });
  });

  async function adminId(): Promise<string> {
    const [row] = await svc.deps.sql<{ id: string }[]>`
      select id from users where lower(email) = lower(${svc.admin.email})`;
    return row!.id;
  }
});
