// The workflow editor in Debian's Chromium: an admin builds query → approval (expiring)
// → condition → API call without typing JSON, sees the server's errors under the fields as they
// type, saves, runs it from the page and watches it live; a second admin approves from the Reviews
// inbox; the API step fails once (the peer answers 500 first) and a retry from that step succeeds
// without running the query again (the target table still has one row). An approval left alone
// expires and ends its run as configured. Screenshots of the editor at laptop and phone widths go
// to test-output/screenshots/, and with UPDATE_SCREENSHOTS=1 to docs/screenshots/.
import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startWorkflowEnv, type WorkflowEnv, type WorkflowView } from '../workflows/setup.ts';

const SHOTS = new URL('../../test-output/screenshots/', import.meta.url).pathname;
const DOCS = new URL('../../docs/screenshots/', import.meta.url).pathname;
const TABLE = `editor_marks_${newId('db').slice(-8).toLowerCase()}`;

let env: WorkflowEnv;
let browser: Browser;
let target: postgres.Sql;
const approver = { email: 'ava.approver@example.test', password: `pw-${newId('usr').slice(-12)}` };
const contexts: BrowserContext[] = [];
let notifyCalls = 0;

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  await mkdir(DOCS, { recursive: true });
  const pg = servers().postgres;
  target = postgres({ ...pg, username: pg.user, max: 1, onnotice: () => {} });
  await target.unsafe(`create table ${TABLE} (id serial primary key, note text not null)`);
  env = await startWorkflowEnv();
  const org = await firstOrganization(env.svc.deps.sql);
  await createUser(env.svc.deps.sql, { orgId: org!.id, role: 'admin', ...approver });
  // The peer the API step calls: it fails the first call, then succeeds.
  env.receiver.on('/notify', () => {
    notifyCalls++;
    return notifyCalls === 1
      ? { status: 500, body: { error: 'down for a moment' } }
      : { status: 200, body: { ok: true } };
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--no-first-run'],
  });
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await env?.stop();
  await target?.unsafe(`drop table if exists ${TABLE}`);
  await target?.end();
});

async function signIn(
  who: { email: string; password: string },
  path: string,
  viewport = { width: 1280, height: 900 },
): Promise<Page> {
  const context = await browser.newContext({ viewport, baseURL: env.svc.url });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(path);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await page.click('main button[type=submit]');
  await page.waitForURL((u) => u.pathname === path);
  return page;
}

const shot = (page: Page, name: string) =>
  Promise.all([
    page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true }),
    process.env.UPDATE_SCREENSHOTS === '1'
      ? page.screenshot({ path: `${DOCS}${name}.png`, fullPage: true })
      : null,
  ]);

/** The error shown for a control, found the way assistive technology finds it: aria-describedby. */
async function errorOf(control: Locator): Promise<string> {
  // Errors show once the person leaves the field (or saves), not while they type.
  await control.blur();
  await expect.poll(() => control.getAttribute('aria-invalid'), { timeout: 5000 }).toBe('true');
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ');
  const page = control.page();
  for (const id of ids) {
    const el = page.locator(`[id="${id}"].field-error`);
    if ((await el.count()) === 1) return (await el.textContent()) ?? '';
  }
  throw new Error('no error is tied to the control');
}

async function addStep(page: Page, kind: string, name: string): Promise<Locator> {
  await page.selectOption('#wf-new-kind', kind);
  await page.click('button[data-add=step]');
  const step = page.locator('#wf-steps > li').last();
  await step.getByLabel('Step name').fill(name);
  return step;
}

const rowCount = async () => Number((await target.unsafe(`select count(*)::int as n from ${TABLE}`))[0]!.n);

describe('the workflow editor', () => {
  let admin: Page;
  let workflowId: string;
  let runPath: string;

  it('builds query → approval → condition → API call with errors shown as the person types', async () => {
    admin = await signIn(env.svc.admin, '/workflows/new');
    await admin.getByLabel('Name', { exact: true }).fill('Mark and notify');
    await admin.getByLabel('Group (optional)').fill('Operations');

    await admin.click('button[data-add=input]');
    const input = admin.locator('.input-row').last();
    await input.getByLabel('Input name').fill('note');
    await input.getByLabel('Default (optional)').fill('from the editor');
    await input.getByLabel('Description').fill('What to write down');

    const mark = await addStep(admin, 'query', 'mark');
    await mark.getByLabel('Credential').selectOption(env.db.credentialId);
    const sql = mark.getByLabel('SQL');
    // A reference to an input that does not exist: the server's rule, shown under the field.
    await sql.fill(`insert into ${TABLE} (note) values (\${nope}) returning id`);
    expect(await errorOf(sql)).toMatch(/unknown input nope/i);
    await sql.fill(`insert into ${TABLE} (note) values (\${note}) returning id`);
    await expect.poll(() => sql.getAttribute('aria-invalid')).toBeNull();

    const signOff = await addStep(admin, 'approval', 'sign_off');
    await signOff.getByLabel('Expires after').fill('2');
    await signOff.getByLabel('Unit').selectOption({ label: 'hours' });
    await signOff.getByLabel('When it expires').selectOption('fail');
    await signOff.getByLabel('every admin').check();

    // Added in the wrong order on purpose, then moved up with the keyboard-reachable button.
    const notify = await addStep(admin, 'api', 'notify');
    await notify.getByLabel('Method').selectOption('POST');
    await notify.getByLabel('URL').fill(`${env.receiver.url}/notify`);
    await notify.getByLabel('Body').fill('{"note": "${note}", "row": ${step.mark.output.rows[0][0]}}');

    const check = await addStep(admin, 'condition', 'check');
    const expression = check.getByLabel('Continue only when');
    await expression.fill('${step.mark.output.num_rows} ==');
    expect(await errorOf(expression)).toMatch(/expected|end/i);
    await expression.fill('${step.mark.output.num_rows} == 1');
    await check.getByRole('button', { name: 'Move up' }).focus();
    await admin.keyboard.press('Enter');
    await expect
      .poll(() =>
        admin
          .locator('#wf-steps > li [data-field=name]')
          .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
      )
      .toEqual(['mark', 'sign_off', 'check', 'notify']);
    await expect.poll(() => admin.locator('#wf-status').textContent()).toContain('check is now step 3 of 4');

    // The cron field: a bad expression is named; a good one previews its next runs in UTC.
    const cron = admin.getByLabel('Cron schedule (UTC, optional)');
    await cron.fill('61 * * * *');
    expect(await errorOf(cron)).toMatch(/minute/i);
    await cron.fill('0 9 * * MON-FRI');
    await expect.poll(() => admin.locator('#wf-cron-preview li').count()).toBe(5);
    expect(await admin.locator('#wf-cron-preview li').first().textContent()).toContain('09:00');
    // An input without a default is allowed on a schedule; the editor says what a scheduled run does.
    const noteDefault = admin.locator('.input-row').last().getByLabel('Default (optional)');
    await noteDefault.fill('');
    await expect
      .poll(() => admin.locator('#wf-cron-preview .warning').textContent())
      .toContain('scheduled runs get no value for note');
    await noteDefault.fill('from the editor');
    await expect.poll(() => admin.locator('#wf-cron-preview .warning').count()).toBe(0);
    await shot(admin, 'workflow-editor-laptop');
    await cron.fill('');
    await expect.poll(() => admin.locator('#wf-status').textContent()).toBe('No problems found.');

    await admin.click('#wf-editor button[type=submit]');
    await admin.waitForURL((u) => /^\/workflows\/wf_/.test(u.pathname));
    workflowId = new URL(admin.url()).pathname.split('/')[2]!;
    // What the editor saved is the SPEC.md 4.1 object, exactly as if it had been sent to the API.
    const saved = await env.api<WorkflowView>('GET', `/api/v1/workflows/${workflowId}`);
    expect(saved.body).toMatchObject({
      name: 'Mark and notify',
      group: 'Operations',
      cron_schedule: null,
      trigger_tracker_label: null,
      inputs: [
        { key: 'note', type: 'string', description: 'What to write down', default: 'from the editor' },
      ],
      run_permissions: [],
    });
    expect(
      saved.body.steps.map((s) => ({
        name: s.name,
        condition: s.condition,
        action: s.action,
        permissions: s.permissions,
      })),
    ).toEqual([
      {
        name: 'mark',
        condition: null,
        action: {
          __type__: 'query',
          credential_id: env.db.credentialId,
          query: `insert into ${TABLE} (note) values (\${note}) returning id`,
          timeout_seconds: null,
        },
        permissions: [],
      },
      {
        name: 'sign_off',
        condition: null,
        action: { __type__: 'approval', reviews_required: 1, timeout_seconds: 7200, on_timeout: 'fail' },
        permissions: [{ role: 'admin' }],
      },
      {
        name: 'check',
        condition: null,
        action: { __type__: 'condition', expression: '${step.mark.output.num_rows} == 1', on_false: 'fail' },
        permissions: [],
      },
      {
        name: 'notify',
        condition: null,
        action: {
          __type__: 'api',
          endpoint: `${env.receiver.url}/notify`,
          method: 'POST',
          headers: {},
          body: '{"note": "${note}", "row": ${step.mark.output.rows[0][0]}}',
          expected_status: 200,
          include_service_jwt: false,
          timeout_seconds: null,
        },
        permissions: [],
      },
    ]);
  });

  it('opens the saved workflow in the editor on a phone without sideways scrolling', async () => {
    const phone = await signIn(env.svc.admin, `/workflows/${workflowId}/edit`, { width: 390, height: 844 });
    await expect.poll(() => phone.locator('#wf-steps > li').count()).toBe(4);
    expect(await phone.locator('#wf-steps > li').nth(1).getByLabel('Expires after').inputValue()).toBe('2');
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await expect.poll(() => phone.locator('#wf-status').textContent()).toBe('No problems found.');
    await shot(phone, 'workflow-editor-phone');
  });

  it('runs from the page, waits for an approval given in the Reviews inbox, and fails at the API step', async () => {
    await admin.click('button:has-text("Start a run")');
    await admin.waitForURL((u) => u.pathname.startsWith(`/runs/${workflowId}/run_`));
    runPath = new URL(admin.url()).pathname;
    // The page reloads itself while the run is live: no navigation from here on.
    await admin.waitForSelector('h1 .badge:has-text("waiting for approval")', { timeout: 20_000 });
    expect(await rowCount()).toBe(1);

    const reviewer = await signIn(approver, '/reviews');
    await reviewer.click('.approval h3 a:has-text("Mark and notify")');
    await reviewer.waitForURL((u) => u.pathname === runPath);
    await reviewer.click('button[value=approve]');
    await reviewer.waitForSelector('.notice:has-text("You approved this step.")');

    await admin.waitForSelector('h1 .badge:has-text("failed")', { timeout: 30_000 });
    expect(await admin.locator('article:has(h2:has-text("notify")) .error').textContent()).toContain(
      'expected status 200 but got 500',
    );
    expect(notifyCalls).toBe(1);
  });

  it('retries from the failed API step: the query does not run again', async () => {
    await admin.click('button:has-text("Retry from step notify")');
    await admin.waitForURL(
      (u) => u.pathname.startsWith(`/runs/${workflowId}/run_`) && u.pathname !== runPath,
    );
    await admin.waitForSelector('h1 .badge:has-text("succeeded")', { timeout: 30_000 });
    expect(notifyCalls).toBe(2);
    // One row: the retry reused the query's output instead of inserting again.
    expect(await rowCount()).toBe(1);
    const retried = env.receiver.requests.filter((r) => r.path === '/notify').at(-1)!;
    expect(JSON.parse(retried.body)).toEqual({ note: 'from the editor', row: 1 });
  });

  it('ends a run whose approval expires as the step is set to (a rejection by expiry)', async () => {
    const page = await signIn(env.svc.admin, '/workflows/new');
    await page.getByLabel('Name', { exact: true }).fill('Expires quickly');
    const gate = await addStep(page, 'approval', 'gate');
    await gate.getByLabel('Expires after').fill('3');
    await gate.getByLabel('When it expires').selectOption('reject');
    await expect.poll(() => page.locator('#wf-status').textContent()).toBe('No problems found.');
    await page.click('#wf-editor button[type=submit]');
    await page.waitForURL((u) => /^\/workflows\/wf_/.test(u.pathname));
    await page.click('button:has-text("Start a run")');
    await page.waitForSelector('h1 .badge:has-text("waiting for approval")', { timeout: 20_000 });
    // Ends as the README says: rejected (by expiry), not failed.
    await page.waitForSelector('h1 .badge:has-text("rejected")', { timeout: 30_000 });
    expect(await page.locator('.warning.error').first().textContent()).toContain('rejected on expiry');
    expect(await page.locator('li:has-text("expiry on gate")').count()).toBe(1);
  });

  it('refuses a bad definition on save with the field named, and saves nothing', async () => {
    const before = (await env.api<{ data: unknown[] }>('GET', '/api/v1/workflows')).body.data.length;
    const page = await signIn(env.svc.admin, '/workflows/new');
    await page.getByLabel('Name', { exact: true }).fill('Broken');
    const step = await addStep(page, 'chat_reply', 'reply');
    await step.getByLabel('Reply in the thread of step').fill('nothing');
    await step.getByLabel('Message', { exact: true }).fill('hi');
    await page.click('#wf-editor button[type=submit]');
    await expect.poll(() => page.locator('#wf-status').textContent()).toContain('Not saved');
    expect(await errorOf(step.getByLabel('Reply in the thread of step'))).toContain('does not come before');
    expect(new URL(page.url()).pathname).toBe('/workflows/new');
    expect((await env.api<{ data: unknown[] }>('GET', '/api/v1/workflows')).body.data.length).toBe(before);
  });
});
