// The dashboard builder as people use it, in Debian's Chromium: an admin builds a dashboard with a
// bar-chart panel and a row action entirely in the pages (preview, input mapping, sharing with the
// member role), a member opens it, sees the chart and presses the row action, which starts the
// workflow with the mapped inputs. Laptop and phone sizes; axe-core on the builder and the
// dashboard; the dashboard page's weight and the chart script's compressed size.
import { mkdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardWorld, type Person, startDashboardWorld } from '../dashboards/fixture.ts';
import { axe } from '../helpers/axe.ts';

const SHOTS = '/work/notes/shots/dashbuilder/';
let w: DashboardWorld;
let browser: Browser;
const problems: string[] = [];

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  w = await startDashboardWorld();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}, 120_000);
afterEach(() => {
  expect(problems.splice(0)).toEqual([]);
});
afterAll(async () => {
  await browser?.close();
  await w?.stop();
});

const LAPTOP = { width: 1366, height: 900 };
const PHONE = { width: 375, height: 740 };

async function signIn(who: Person, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  // The chart (uPlot and its adopted stylesheet) runs under the strict CSP: any violation or page
  // error fails the test (afterEach below).
  await context.exposeFunction('__cspViolation', (v: string) => problems.push(v));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { __cspViolation(v: string): void }).__cspViolation(
        `${location.pathname}: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`,
      ),
    );
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
  await page.goto(`${w.env.svc.url}/login`);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
  return page;
}

/** No element wider than the window: nothing to scroll sideways on a phone but the tables' own boxes. */
async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

async function build(page: Page, name: string): Promise<string> {
  await page.goto(`${w.env.svc.url}/dashboards`);
  await page.click('text=New dashboard');
  expect(await axe(page)).toEqual([]);
  await page.fill('#dash-name', name);
  await page.check('input[name=restricted_access][value=true]');
  await Promise.all([page.waitForURL(/\/edit/), page.click('button:has-text("Create and add panels")')]);
  const id = /\/dashboards\/([^/]+)\/edit/.exec(page.url())![1]!;

  await page.fill('#pe-title', 'Refund candidates');
  await page.selectOption('#pe-view', 'bar');
  const cred = await page
    .locator('#pe-credential option', { hasText: 'Customers as' })
    .first()
    .getAttribute('value');
  expect(cred).toBe(w.credentials.open);
  await page.selectOption('#pe-credential', cred!);
  await page.fill(
    '#pe-query',
    'select name, id as customer_id, id * 10 as amount from customers where id >= ${min_id} order by id',
  );
  await page.fill('#pe-in-0-key', 'min_id');
  await page.fill('#pe-in-0-description', 'Smallest customer id');
  await page.fill('#pe-in-0-sample', '1');
  await page.fill('#pe-act-0-label', 'Refund');
  await page.selectOption('#pe-act-0-workflow', w.refundWorkflowId);
  // Preview: the query runs as the admin and the chart is drawn; the mapping lists its columns.
  await page.click('button:has-text("Preview")');
  await page.locator('#preview figure.chart canvas').first().waitFor();
  expect(await page.locator('#preview table.result-table tbody tr').count()).toBe(2);
  if ((page.viewportSize()?.width ?? 0) > 1000)
    await page.screenshot({ path: `${SHOTS}builder-preview-laptop.png`, fullPage: true });
  // The workflow's customer_id input is filled from the column of the same name by default.
  expect(await page.inputValue('#pe-act-0-map-customer_id')).toBe('customer_id');
  await page.selectOption('#pe-act-0-map-note', 'name');
  await page.click('button:has-text("Save panel")');
  await page.waitForURL(/notice=/);
  expect(await page.locator('p.notice').textContent()).toContain('Refund candidates');
  // The saved panel is in the list, and the form below is a new panel's: filling it in again
  // adds a panel instead of overwriting the one just saved.
  expect(page.url()).toMatch(/#panel-/);
  expect(await page.locator('#panel-editor h2').textContent()).toBe('New panel');
  expect(await page.inputValue('#pe-title')).toBe('');
  expect(await page.locator('.panel-list li strong').allTextContents()).toEqual(['Refund candidates']);

  // Share with the member role (the dashboard is restricted).
  await page.selectOption('#share-role', 'member');
  await page.click('button:has-text("Share with role")');
  await page.waitForURL(/notice=/);
  expect(await page.locator('#sharing').textContent()).toContain('member role');
  return id;
}

describe('the dashboard builder', () => {
  it('an admin builds a chart panel with a row action and shares it; a member uses it (laptop)', async () => {
    const admin = await signIn(w.admin, LAPTOP);
    const id = await build(admin, 'Refunds');
    expect(await axe(admin)).toEqual([]);
    await admin.screenshot({ path: `${SHOTS}builder-laptop.png`, fullPage: true });

    // What the form saved is the REST shape, through the same schema: read it back over the API.
    const saved = await w.call<{
      panels: Array<{
        inputs: unknown;
        actions: Array<Record<string, unknown>>;
        details: Record<string, unknown>;
      }>;
    }>('GET', `/v1/dashboards/${id}`, undefined, w.admin);
    expect(saved.body.panels).toHaveLength(1);
    expect(saved.body.panels[0]!.details.view).toBe('bar');
    expect(saved.body.panels[0]!.inputs).toEqual([{ key: 'min_id', description: 'Smallest customer id' }]);
    expect(saved.body.panels[0]!.actions[0]).toMatchObject({
      label: 'Refund',
      workflow_id: w.refundWorkflowId,
      input_mappings: [
        { workflow_input_key: 'customer_id', column: 'customer_id' },
        { workflow_input_key: 'note', column: 'name' },
      ],
    });
    const audit = await w.env.svc.deps.sql<{ event: string }[]>`
      select event from audit_log where subject->>'dashboard_id' = ${id} order by seq`;
    expect(audit.map((a) => a.event)).toEqual([
      'dashboard.created',
      'dashboard.updated',
      'dashboard.grant_added',
    ]);

    const member = await signIn(w.member, LAPTOP);
    await member.goto(`${w.env.svc.url}/dashboards`);
    await member.click('text=Refunds');
    await member.fill('input[id$=".min_id"]', '1');
    await member.click('button:has-text("Run")');
    await member.locator('figure.chart canvas').first().waitFor();
    expect(await member.locator('figure.chart figcaption').textContent()).toContain(
      'Bar chart of customer_id, amount by name',
    );
    expect(await member.locator('text=Edit dashboard').count()).toBe(0);
    expect(await axe(member)).toEqual([]);
    const html = await (await member.request.get(member.url())).text();
    expect(html.length).toBeLessThanOrEqual(30_000);
    await member.screenshot({ path: `${SHOTS}dashboard-laptop.png`, fullPage: true });

    const row = member.locator('table.result-table tbody tr', { hasText: 'Grace' });
    await Promise.all([member.waitForURL(/\/runs\//), row.locator('button:has-text("Refund")').click()]);
    const [, workflowId, runId] = /\/runs\/([^/]+)\/([^/?#]+)/.exec(member.url())!;
    expect(workflowId).toBe(w.refundWorkflowId);
    const run = await w.env.waitRun(workflowId!, runId!);
    expect(run.inputs).toEqual({ customer_id: 2, note: 'Grace' });
    expect(run.status, run.error ?? '').toBe('succeeded');
  }, 180_000);

  it('works at phone width: build, reorder, preview, and the dashboard shows the chart', async () => {
    const admin = await signIn(w.admin, PHONE);
    const id = await build(admin, 'Phone refunds');
    expect(await overflow(admin)).toBeLessThanOrEqual(0);
    expect(await axe(admin)).toEqual([]);

    // A second panel (a table), then moved above the first with the keyboard.
    await admin.goto(`${w.env.svc.url}/dashboards/${id}/edit`);
    await admin.fill('#pe-title', 'Names');
    await admin.selectOption('#pe-credential', w.credentials.open);
    await admin.fill('#pe-query', 'select name from customers order by name');
    await admin.click('button:has-text("Save panel")');
    await admin.waitForURL(/notice=/);
    await admin.locator('button[aria-label="Move Names up"]').focus();
    await admin.keyboard.press('Enter');
    await admin.locator('p.notice', { hasText: 'Panel moved up' }).waitFor();
    expect(await admin.locator('.panel-list li strong').allTextContents()).toEqual([
      'Names',
      'Refund candidates',
    ]);
    await admin.screenshot({ path: `${SHOTS}builder-phone.png`, fullPage: true });

    const member = await signIn(w.member, PHONE);
    const panelId = (
      await w.call<{ panels: Array<{ id: string; title: string }> }>(
        'GET',
        `/v1/dashboards/${id}`,
        undefined,
        w.admin,
      )
    ).body.panels.find((p) => p.title === 'Refund candidates')!.id;
    await member.goto(`${w.env.svc.url}/dashboards/${id}?${encodeURIComponent(`${panelId}.min_id`)}=1`);
    await member.locator('figure.chart canvas').first().waitFor();
    expect(await overflow(member)).toBeLessThanOrEqual(0);
    expect(await axe(member)).toEqual([]);
    await member.screenshot({ path: `${SHOTS}dashboard-phone.png`, fullPage: true });
  }, 180_000);

  it('says what is wrong with a panel in words beside the form, and saves nothing', async () => {
    const admin = await signIn(w.admin, LAPTOP);
    const made = await w.call<{ id: string }>(
      'POST',
      '/v1/dashboards',
      { name: 'Checked', restricted_access: false },
      w.admin,
    );
    await admin.goto(`${w.env.svc.url}/dashboards/${made.body.id}/edit`);
    await admin.fill('#pe-title', 'Oops');
    await admin.selectOption('#pe-credential', w.credentials.open);
    await admin.fill('#pe-query', 'delete from customers');
    await admin.click('button:has-text("Save panel")');
    const alert = admin.locator('#editor-errors');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Query: a panel query may only read');
    expect(await admin.locator('#pe-query-error').textContent()).toContain('may only read');
    // The field itself is marked invalid and described by its message.
    expect(await admin.getAttribute('#pe-query', 'aria-invalid')).toBe('true');
    expect(await admin.getAttribute('#pe-query', 'aria-describedby')).toBe('pe-query-hint pe-query-error');
    // The typed text stays in the form to be fixed.
    expect(await admin.inputValue('#pe-query')).toBe('delete from customers');
    const after = await w.call<{ panels: unknown[] }>(
      'GET',
      `/v1/dashboards/${made.body.id}`,
      undefined,
      w.admin,
    );
    expect(after.body.panels).toEqual([]);
    expect(await axe(admin)).toEqual([]);

    // A member may open a dashboard shared with everyone, not its builder.
    const member = await signIn(w.member, PHONE);
    const res = await member.goto(`${w.env.svc.url}/dashboards/${made.body.id}/edit`);
    expect(res?.status()).toBe(403);
    // Nor its preview: a posted draft is refused before it runs (no query entry for it).
    const csrf = await member.locator('input[name=_csrf]').first().inputValue();
    const statement = `select 'member preview ${Date.now()}' as probe`;
    const preview = await member.request.post(`${w.env.svc.url}/dashboards/${made.body.id}/edit/preview`, {
      form: {
        _csrf: csrf,
        panel: '',
        title: 'x',
        credential: w.credentials.open,
        query: statement,
        view: 'table',
      },
    });
    expect(preview.status()).toBe(403);
    const ran = await w.env.svc.deps.sql`select 1 from audit_log where statement = ${statement}`;
    expect(ran).toHaveLength(0);
  }, 120_000);

  it('deletes a dashboard only after the confirmation page, and reports the chart script size', async () => {
    const admin = await signIn(w.admin, LAPTOP);
    const made = await w.call<{ id: string }>(
      'POST',
      '/v1/dashboards',
      { name: 'Short-lived', restricted_access: false },
      w.admin,
    );
    await admin.goto(`${w.env.svc.url}/dashboards/${made.body.id}/edit`);
    await admin.click('button:has-text("Delete this dashboard")');
    await admin.locator('h1', { hasText: 'Delete the dashboard Short-lived?' }).waitFor();
    expect((await w.call('GET', `/v1/dashboards/${made.body.id}`, undefined, w.admin)).status).toBe(200);
    await Promise.all([
      admin.waitForURL(/\/dashboards\?notice=/),
      admin.click('button:has-text("Delete the dashboard")'),
    ]);
    expect((await w.call('GET', `/v1/dashboards/${made.body.id}`, undefined, w.admin)).status).toBe(404);

    const script = await (await admin.request.get(`${w.env.svc.url}/assets/dashboard-chart.js`)).body();
    const gz = gzipSync(script).length;
    console.log(`dashboard-chart.js: ${script.length} bytes, ${gz} bytes gzip`);
    expect(gz).toBeLessThanOrEqual(40_000);
  }, 120_000);
});
