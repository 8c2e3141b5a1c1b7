// biome-ignore-all lint/suspicious/noTemplateCurlyInString: panel queries are templates.
// The web interface in Debian's Chromium (playwright-core, never a downloaded browser): two people
// sign in, use a dashboard, start a workflow from a row, approve its approval step and a query
// request, search the audit log, use the console and settings. Every page is saved as a screenshot
// in test-output/screenshots/ (git-ignored); with UPDATE_SCREENSHOTS=1 the README's two images are
// rewritten in docs/screenshots/.
import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardWorld, type Person, startDashboardWorld } from '../dashboards/fixture.ts';

const SHOTS = new URL('../../test-output/screenshots/', import.meta.url).pathname;
const DOCS = new URL('../../docs/screenshots/', import.meta.url).pathname;

let w: DashboardWorld;
let browser: Browser;
let dashboardId: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  await mkdir(DOCS, { recursive: true });
  w = await startDashboardWorld();
  const created = await w.call<{ id: string }>(
    'POST',
    '/v1/dashboards',
    {
      name: 'Customer support',
      restricted_access: false,
      panels: [
        {
          title: 'Customers',
          inputs: [{ key: 'min_id', description: 'Smallest customer id' }],
          actions: [
            {
              label: 'Close account',
              workflow_id: w.approvalWorkflowId,
              input_mappings: [
                { workflow_input_key: 'customer_id', column: 'id' },
                { workflow_input_key: 'note', column: 'name' },
              ],
            },
            { label: null, workflow_id: null },
          ],
          details: {
            __type__: 'query',
            query: 'select id, name, email from customers where id >= ${min_id}::int order by id',
            credential_id: w.credentials.open,
          },
        },
        {
          title: 'Customers (reviewed credential)',
          details: {
            __type__: 'query',
            query: 'select id, name from customers order by id',
            credential_id: w.credentials.reviewed,
          },
        },
      ],
    },
    w.admin,
  );
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  dashboardId = created.body.id;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-gpu',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await w?.stop();
});

async function signedIn(
  person: Person,
  path: string,
  viewport = { width: 1280, height: 860 },
): Promise<Page> {
  const context = await browser.newContext({ viewport, baseURL: w.env.svc.url });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(path);
  // Signed out: the page sends us to the login form and back afterwards.
  expect(new URL(page.url()).pathname).toBe('/login');
  await page.fill('#email', person.email);
  await page.fill('#password', person.password);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => u.pathname === path.split('?')[0]);
  return page;
}

const shot = (page: Page, name: string, also?: string) =>
  Promise.all([
    page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true }),
    // The README's images change only when asked (UPDATE_SCREENSHOTS=1), not on every run.
    also && process.env.UPDATE_SCREENSHOTS === '1'
      ? page.screenshot({ path: `${DOCS}${also}.png`, fullPage: true })
      : null,
  ]);

describe('the web interface', () => {
  let member: Page;
  let admin: Page;
  let runPath: string;

  it('signs a member in and lists the dashboards', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      baseURL: w.env.svc.url,
    });
    contexts.push(context);
    const login = await context.newPage();
    await login.goto('/login');
    await shot(login, '01-login');
    member = await signedIn(w.member, '/dashboards');
    await expect(member.locator('h1').textContent()).resolves.toBe('Dashboards');
    await expect(member.locator('nav a[aria-current=page]').textContent()).resolves.toBe('Dashboards');
    // Members do not get the audit log in their navigation.
    await expect(member.locator('nav a[href="/audit"]').count()).resolves.toBe(0);
    await shot(member, '02-dashboards');
  });

  it('opens a dashboard, fills an input and sees the governed result with row actions', async () => {
    await member.click('text=Customer support');
    await member.waitForURL(`**/dashboards/${dashboardId}`);
    await expect(member.locator('text=Fill in the inputs and press Run.').count()).resolves.toBe(1);
    await member.fill('input[name$=".min_id"]', '1');
    await member.click('form.row button:has-text("Run")');
    await member.waitForSelector('table');
    const rows = member.locator('article').first().locator('tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.first().textContent()).resolves.toContain('Ada');
    // One visible action per row: the action with neither label nor workflow is not rendered.
    await expect(
      member.locator('article').first().locator('tbody tr').first().locator('button').count(),
    ).resolves.toBe(1);
    // The reviewed panel does not run on a page view; it offers to ask for a review.
    await expect(member.locator('text=Request review').count()).resolves.toBe(1);
    await member.click('text=Request review');
    await member.waitForSelector('.notice');
    await expect(member.locator('.notice').textContent()).resolves.toMatch(/Submitted for review as qr_/);
    await expect(member.locator('text=Waiting for 1 review').count()).resolves.toBe(1);
    await shot(member, '03-dashboard', 'dashboard');
    const phone = await signedIn(
      w.member,
      `/dashboards/${dashboardId}?${new URL(member.url()).searchParams}`,
      {
        width: 390,
        height: 844,
      },
    );
    await shot(phone, '03b-dashboard-phone');
  });

  it('runs a row action: the workflow starts with the row values and the run page shows it waiting', async () => {
    await member
      .locator('tbody tr', { hasText: 'Grace' })
      .locator('button:has-text("Close account")')
      .click();
    await member.waitForURL(/\/runs\/wf_[0-9A-Z]+\/run_[0-9A-Z]+/);
    runPath = new URL(member.url()).pathname;
    await expect(member.locator('.notice').textContent()).resolves.toContain('The workflow run started.');
    expect(JSON.parse((await member.locator('code').first().textContent()) ?? '')).toEqual({
      customer_id: 2,
      note: 'Grace',
    });
    // The initiator may not approve their own run.
    await waitFor(member, runPath, 'Waiting for approval by someone other than you');
    await shot(member, '04-run-waiting');
  });

  it('lets a second user approve the approval step, and the run finishes', async () => {
    admin = await signedIn(w.admin, runPath);
    await admin.click('button:has-text("Approve")');
    await admin.waitForSelector('.notice');
    await expect(admin.locator('.notice').textContent()).resolves.toContain('You approved this step.');
    await waitFor(admin, runPath, 'succeeded');
    await expect(admin.locator('text=adam.admin@example.test on sign_off').count()).resolves.toBe(1);
    await shot(admin, '05-run-approved');
    await admin.goto('/runs');
    await expect(admin.locator('tbody tr').first().textContent()).resolves.toContain('Close account');
    await shot(admin, '06-runs');
  });

  it('shows the query request in the review queue and approves it', async () => {
    await admin.goto('/reviews');
    const card = admin.locator('article', { hasText: 'mia.member@example.test' });
    await expect(card.count()).resolves.toBe(1);
    await expect(card.textContent()).resolves.toContain('select id, name from customers');
    await shot(admin, '07-reviews', 'review-queue');
    await card.locator('input[name=comment]').fill('Looks fine');
    await card.locator('button:has-text("Approve")').click();
    await admin.waitForSelector('.notice');
    await expect(admin.locator('.notice').textContent()).resolves.toMatch(/Approved qr_/);
    // The member now sees the approved panel result on the dashboard itself.
    await member.goto(`/dashboards/${dashboardId}`);
    const reviewed = member.locator('article', { hasText: 'reviewed credential' });
    await expect(reviewed.locator('tbody tr').count()).resolves.toBe(2);
  });

  it('filters the audit log by person, AI origin and bypass, and offers the export', async () => {
    await admin.goto('/audit');
    await admin.selectOption('#person', { label: w.member.email });
    await admin.click('button:has-text("Search")');
    await admin.waitForURL(/person=usr_/);
    const rows = admin.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    for (const text of await rows.allTextContents()) expect(text).toContain(w.member.email);
    expect(await admin.locator('a:has-text("CSV")').getAttribute('href')).toContain(
      `actor=${w.member.userId}`,
    );
    await shot(admin, '08-audit');
    await admin.check('input[name=ai]');
    await admin.click('button:has-text("Search")');
    await admin.waitForURL(/ai=1/);
    await expect(admin.locator('text=No entry matches.').count()).resolves.toBe(1);
    const csv = await admin.request.get(`/api/v1/audit/export?actor=${w.member.userId}&format=csv`);
    expect(csv.status()).toBe(200);
    expect(await csv.text()).toContain('dashboard');
  });

  it('runs a query in the console, and creates and revokes a personal token', async () => {
    await admin.goto('/console');
    await admin.selectOption('#credential', `${w.databaseId}/${w.credentials.open}`);
    await admin.fill('#console-form .cm-content', 'select name from customers order by id');
    await admin.click('button:has-text("Run query")');
    await admin.waitForSelector('table');
    await expect(admin.locator('tbody').textContent()).resolves.toContain('Grace');
    await shot(admin, '09-console');
    await admin.goto('/settings');
    await admin.fill('#token-name', 'ci');
    await admin.click('button:has-text("Create token")');
    const secret = (await admin.locator('#new-token').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^cspat_/);
    await shot(admin, '10-settings');
    const ok = await fetch(`${w.env.svc.url}/v1/dashboards`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(ok.status).toBe(200);
    // Shown once: the settings page never shows it again.
    await admin.goto('/settings');
    await expect(admin.locator('#new-token').count()).resolves.toBe(0);
    expect(await admin.content()).not.toContain(secret);
    await admin.locator('li', { hasText: 'ci' }).locator('button:has-text("Revoke")').click();
    // A confirmation step first, saying what revoking does; the token still works until confirmed.
    await admin.waitForSelector('text=Revoke your token ci?');
    await admin.click('button:has-text("Revoke the token")');
    await admin.waitForSelector('.notice');
    const revoked = await fetch(`${w.env.svc.url}/v1/dashboards`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(revoked.status).toBe(401);
  });

  it('refuses a form post without the CSRF token', async () => {
    const res = await admin.request.post('/settings/tokens', { form: { name: 'forged' } });
    expect(res.status()).toBe(403);
  });
});

/** Reloads a page until it shows `text` (the run moves on in Temporal meanwhile). */
async function waitFor(page: Page, path: string, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await page.goto(path);
    if ((await page.locator(`text=${text}`).count()) > 0) return;
    if (Date.now() > deadline) throw new Error(`${path} never showed "${text}"`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
