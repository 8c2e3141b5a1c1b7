// Risk levels in Debian's Chromium: an admin sets, in a credential's form on the database page,
// that DDL needs 2 approvals; a member's CREATE TABLE then waits for both, and after the first
// approval the review page shows its level, why, "1 of 2 approvals" and who may approve.
import { mkdir } from 'node:fs/promises';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SHOT_DIR = '/work/notes/shots/risk';
let svc: TestService;
let browser: Browser;
let databaseId: string;
let credentialId: string;
let authorToken: string;
const TABLE = `risk_${Date.now().toString(36)}`;
const reviewer = { email: 'rita.reviewer@example.test', password: 'reviewer password 1' };

beforeAll(async () => {
  svc = await startTestService();
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'shop',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 1, default_credential: true },
      ],
    }),
  });
  const db = (await res.json()) as { id: string; credentials: Array<{ id: string }> };
  databaseId = db.id;
  credentialId = db.credentials[0]!.id;
  const [org] = await svc.deps.sql<{ id: string }[]>`select id from organizations`;
  const author = await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: 'arno.author@example.test',
    role: 'member',
    password: null,
  });
  authorToken = (await createPersonalToken(svc.deps.sql, { userId: author.id, name: 't', expiresAt: null }))
    .secret;
  await createUser(svc.deps.sql, {
    orgId: org!.id,
    email: reviewer.email,
    role: 'member',
    password: reviewer.password,
  });
  await mkdir(SHOT_DIR, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

async function signIn(person: { email: string; password: string }): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${svc.url}/login`);
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await Promise.all([
    page.waitForURL((u) => !u.pathname.startsWith('/login')),
    page.click('button[type=submit]'),
  ]);
  return page;
}

describe('risk levels on the database page and the review page', () => {
  it('DDL set to 2 approvals in the credential form: the review page shows "1 of 2 approvals" after one', async () => {
    const admin = await signIn(svc.admin);
    await admin.goto(`${svc.url}/databases/${databaseId}`);
    const card = admin.locator(`#cred-${credentialId}`);
    await card.locator('summary', { hasText: 'Edit' }).click();
    await card.locator('summary', { hasText: 'Risk levels' }).click();
    await card.locator(`[id="f-${credentialId}-large_write_rows"]`).fill('500');
    await card.locator(`[id="f-${credentialId}-risk_reviews.ddl.reviews_required"]`).fill('2');
    await card.locator(`[id="f-${credentialId}-risk_reviews.ddl.approver_role"]`).selectOption('');
    await Promise.all([
      admin.waitForLoadState('load'),
      card.locator('button', { hasText: 'Save credential' }).click(),
    ]);
    await expect.poll(() => admin.locator('main').textContent()).toMatch(/Credential saved/);
    await admin.screenshot({ path: `${SHOT_DIR}/credential-form.png`, fullPage: true });
    const stored = (await (
      await svc.fetch(`/api/v1/desk/databases/${databaseId}`, { headers: { 'x-api-key': svc.apiKey } })
    ).json()) as { credentials: Array<Record<string, unknown>> };
    expect(stored.credentials[0]).toMatchObject({
      large_write_rows: 500,
      risk_reviews: { ddl: { reviews_required: 2 } },
    });
    await admin.context().close();

    const submitted = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${authorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: databaseId, statement: `create table ${TABLE} (id int)` }),
    });
    expect(submitted.status).toBe(202);
    const { request } = (await submitted.json()) as { request: { id: string } };

    const rev = await signIn(reviewer);
    await rev.goto(`${svc.url}/reviews`);
    const req = rev.locator(`article#${request.id}`);
    expect(await req.locator('[data-approvals]').textContent()).toBe('0 of 2 approvals');
    await Promise.all([rev.waitForLoadState('load'), req.locator('button[value=approve]').click()]);
    await rev.goto(`${svc.url}/reviews`);
    const line = rev.locator(`article#${request.id} .requirement`);
    expect(await line.locator('[data-approvals]').textContent()).toBe('1 of 2 approvals');
    expect(await line.locator('[data-risk-level]').getAttribute('data-risk-level')).toBe('ddl');
    const text = await line.textContent();
    expect(text).toMatch(/changes the structure/);
    expect(text).toMatch(/who may approve: anyone with access but the author/);
    await line.scrollIntoViewIfNeeded();
    await rev.screenshot({ path: `${SHOT_DIR}/review-1-of-2.png`, fullPage: true });
    await rev.context().close();
  });
});
