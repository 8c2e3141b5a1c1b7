// The Reviews inbox's workflow approvals and the run page, in Debian's Chromium at laptop and phone
// sizes: a reviewer under a data-protection policy sees who started a waiting run and that its
// inputs are hidden from them (an admin without a policy sees them), and approves it from the
// inbox without opening the run; a run started from its page loses the "started" banner once it
// has ended. The workflow editor shows an error only after its field is left, in the form's words.
// axe finds no serious violation on these pages.
import { mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { firstOrganization } from '../../store/users.ts';
import { axe } from '../helpers/axe.ts';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv } from '../workflows/setup.ts';

const SHOTS = '/work/notes/shots/workspace2/';
const LAPTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const SECRET = 'vip.customer@example.test';

let env: WorkflowEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];
const password = `pw-${newId('usr').slice(-12)}`;
const reviewer = { email: 'rae.reviewer@example.test', password, id: '' };
const clear = { email: 'cal.admin@example.test', password, id: '' };
let starter: Awaited<ReturnType<typeof makeUser>>;
let workflowId = '';

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  env = await startWorkflowEnv();
  const orgId = (await firstOrganization(env.svc.deps.sql))!.id;
  reviewer.id = (await createUser(env.svc.deps.sql, { orgId, role: 'member', ...reviewer })).id;
  clear.id = (await createUser(env.svc.deps.sql, { orgId, role: 'admin', ...clear })).id;
  starter = await makeUser(env, 'admin', 'stan.starter@example.test');
  // The reviewer reads the database the workflow queries under a policy; the starter under none.
  const policy = await env.api('POST', `/api/v1/desk/databases/${env.db.id}/policies`, {
    name: 'Reviewers',
    rules: [{ schema: 'public', table: 'customers', column: 'email', action: 'mask' }],
    assignments: { users: [reviewer.id], roles: [] },
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(201);
  const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'Refund a customer',
    inputs: [{ key: 'customer_email', description: 'Who gets the refund', type: 'string' }],
    steps: [
      {
        name: 'sign_off',
        action: { __type__: 'approval' },
        permissions: [{ user_id: reviewer.id }, { role: 'admin' }],
      },
      {
        name: 'look_up',
        action: {
          __type__: 'query',
          credential_id: env.db.credentialId,
          query: 'select ${customer_email}::text as email',
        },
      },
    ],
  });
  expect(wf.status, JSON.stringify(wf.body)).toBe(201);
  workflowId = wf.body.id;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--no-first-run'],
  });
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await env?.stop();
});

async function signIn(who: { email: string; password: string }, path: string, viewport = LAPTOP) {
  const context = await browser.newContext({ viewport, baseURL: env.svc.url });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(path);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForURL((u) => u.pathname === path), page.click('main button[type=submit]')]);
  return page;
}

describe('workflow approvals in the Reviews inbox', () => {
  it('shows the starter and hides the inputs from a reviewer under a policy, who approves inline', async () => {
    const runId = await runWorkflow(env, workflowId, { customer_email: SECRET }, starter.bearer);
    await env.waitRun(workflowId, runId, (r) => r.status === 'waiting_for_approval');

    // An admin without a policy reads the inputs as they are.
    const cal = await signIn(clear, '/reviews');
    const seen = cal.locator(`#approval-${runId}`);
    expect(await seen.locator('[data-inputs="shown"]').textContent()).toContain(SECRET);

    const rae = await signIn(reviewer, '/reviews');
    const card = rae.locator(`#approval-${runId}`);
    expect(await card.textContent()).toContain('Started by stan.starter@example.test');
    expect(await card.textContent()).toContain('Refund a customer');
    expect(await card.locator('[data-inputs="hidden"]').textContent()).toContain('inputs are hidden');
    expect(await card.textContent()).not.toContain(SECRET);
    // Nor does the run page (or the API, the same domain function) give them away.
    expect(await (await rae.request.get(`/runs/${workflowId}/${runId}`)).text()).not.toContain(SECRET);
    expect(await axe(rae)).toEqual([]);
    await rae.screenshot({ path: `${SHOTS}inbox-approval.png`, fullPage: true });

    const phone = await signIn(reviewer, '/reviews', PHONE);
    await phone.locator(`#approval-${runId}`).waitFor();
    expect(await axe(phone)).toEqual([]);
    await phone.screenshot({ path: `${SHOTS}inbox-approval-phone.png`, fullPage: true });

    await card.getByLabel('Comment (optional)').fill('Checked with support');
    await Promise.all([
      rae.waitForURL(/\/reviews\?notice=/),
      card.getByRole('button', { name: 'Approve' }).click(),
    ]);
    expect(await rae.locator('.notice').textContent()).toContain(`You approved run ${runId}`);
    expect(await rae.locator(`#approval-${runId}`).count()).toBe(0);
    const run = await env.waitRun(workflowId, runId);
    expect(run.status).toBe('succeeded');
    expect(run.approvals?.[0]).toMatchObject({ user_id: reviewer.id, decision: 'approve' });
  });
});

describe('the run page', () => {
  it('drops the "started" banner once the run has ended', async () => {
    const quick = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Count one',
      inputs: [],
      steps: [
        {
          name: 'count',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select 1 as one' },
        },
      ],
    });
    expect(quick.status).toBe(201);
    const admin = await signIn(env.svc.admin, `/workflows/${quick.body.id}`);
    await Promise.all([admin.waitForURL(/\/runs\/wf_/), admin.click('text=Start a run')]);
    const runId = new URL(admin.url()).pathname.split('/')[3]!;
    await env.waitRun(quick.body.id, runId);
    // The same address (with its signed notice) once the run has ended: status, no banner.
    await admin.reload();
    expect(await admin.locator('h1 .badge').textContent()).toBe('succeeded');
    expect(await admin.locator('main').textContent()).not.toContain('The workflow run started.');
    expect(new URL(admin.url()).searchParams.get('notice')).toBe('The workflow run started.');
    expect(await axe(admin)).toEqual([]);
  });
});

describe('the workflow editor', () => {
  it('shows an error after its field is left, in the words of the form, using the page width', async () => {
    const admin = await signIn(env.svc.admin, '/workflows/new');
    await admin.selectOption('#wf-new-kind', 'chat');
    await admin.click('button[data-add=step]');
    const step = admin.locator('#wf-steps > li').last();
    const name = step.getByLabel('Step name');
    await name.fill('tell');
    const channel = step.getByLabel('Channel');
    await channel.fill('');
    // Untouched fields say nothing while the server already knows they are empty.
    await expect.poll(() => admin.locator('#wf-status').textContent()).toContain('Not finished yet');
    expect(await channel.getAttribute('aria-invalid')).toBeNull();
    await channel.blur();
    await expect.poll(() => channel.getAttribute('aria-invalid')).toBe('true');
    const errorId = ((await channel.getAttribute('aria-describedby')) ?? '').split(' ').at(-1)!;
    const said = await admin.locator(`[id="${errorId}"]`).textContent();
    expect(said).toBe('Channel is required.');
    expect(said).not.toContain('chat_channel');
    // The message field, never visited, stays quiet.
    expect(await step.getByLabel('Message').getAttribute('aria-invalid')).toBeNull();
    // On a laptop the form is as wide as the page's content.
    const widths = await admin.evaluate(() => ({
      form: document.getElementById('wf-editor')!.getBoundingClientRect().width,
      main: document.querySelector('main')!.clientWidth,
    }));
    expect(widths.form).toBeGreaterThan(widths.main * 0.85);
    expect(await axe(admin)).toEqual([]);
    await admin.screenshot({ path: `${SHOTS}workflow-editor.png`, fullPage: true });
  });
});
