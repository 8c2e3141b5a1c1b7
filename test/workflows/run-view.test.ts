// biome-ignore-all lint/suspicious/noTemplateCurlyInString: step queries are expression-language templates.
// A write step says how many rows it changed, a condition that ended the run
// says so, a running run can be canceled from its page, and admins see the run's audit entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { signIn } from '../helpers/service.ts';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

let env: WorkflowEnv;
let admin: { cookie: string; csrf: string };
const TABLE = `run_view_${Date.now()}`;

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: true });
  admin = await signIn(env.svc, env.svc.admin.email, env.svc.admin.password);
  await withHarnessPostgres(async (sql) => {
    await sql`create table ${sql(TABLE)} (id int primary key, state text)`;
    await sql`insert into ${sql(TABLE)} values (1, 'open'), (2, 'open')`;
  });
});
afterAll(async () => {
  await env?.stop();
  await withHarnessPostgres((sql) => sql`drop table if exists ${sql(TABLE)}`);
});

const page = async (path: string) =>
  (await env.svc.fetch(path, { headers: { cookie: admin.cookie } })).text();

describe('the run page', () => {
  it('shows rows affected by a write, why a condition ended the run, timings and the audit entries', async () => {
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'close one',
      inputs: [{ key: 'id', description: 'row', type: 'integer' }],
      steps: [
        {
          name: 'close',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `update ${TABLE} set state = 'closed' where id = \${id}`,
            timeout_seconds: null,
          },
        },
        {
          name: 'more',
          action: {
            __type__: 'condition',
            expression: '${step.close.output.num_rows} > 1',
            on_false: 'succeed',
          },
        },
        { name: 'never', action: { __type__: 'api', endpoint: `${env.receiver.url}/never` } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = await runWorkflow(env, created.body.id, { id: 1 });
    const run = await env.waitRun(created.body.id, runId);
    expect(run.status).toBe('succeeded');
    const html = await page(`/runs/${created.body.id}/${runId}`);
    expect(html).toContain('UPDATE — 1 row(s) affected');
    expect(html).not.toContain('No rows.');
    expect(html).toContain('The condition was false, so the run ended here as <strong>succeeded</strong>');
    expect(html).toMatch(/UTC → \d{4}-\d{2}-\d{2} [\d:]+ UTC \(\d/);
    expect(html).toContain('Audit entries of this run');
    expect(html).toContain(`update ${TABLE} set state`);
  });

  it('cancels a run waiting for approval from its page', async () => {
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'needs a yes',
      steps: [
        {
          name: 'ok',
          action: { __type__: 'approval', reviews_required: 1 },
          permissions: [{ role: 'admin' }],
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = await runWorkflow(env, created.body.id, {});
    await env.waitRun(created.body.id, runId, (r) => r.status === 'waiting_for_approval');
    const path = `/runs/${created.body.id}/${runId}`;
    expect(await page(path)).toContain('Cancel run');
    const res = await env.svc.fetch(`${path}/cancel`, {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrf }),
      redirect: 'manual',
    });
    expect(decodeURIComponent(res.headers.get('location')!)).toContain('Cancel requested');
    const run = await env.waitRun(created.body.id, runId);
    expect(run.status).toBe('canceled');
  });
});

describe('the run list', () => {
  it('filters by workflow, status and trigger', async () => {
    const mk = async (name: string) =>
      (await env.api<{ id: string }>('POST', '/api/v1/workflows', { name, steps: [] })).body.id;
    const a = await mk('list a');
    const b = await mk('list b');
    const runA = await runWorkflow(env, a, {});
    const runB = await runWorkflow(env, b, {});
    await env.waitRun(a, runA);
    await env.waitRun(b, runB);
    const onlyA = await page(`/runs?workflow=${a}`);
    expect(onlyA).toContain(runA);
    expect(onlyA).not.toContain(runB);
    const failed = await page('/runs?status=failed');
    expect(failed).not.toContain(runA);
    const api = await page('/runs?trigger=api');
    expect(api).toContain(runA);
    expect(api).toContain(runB);
    expect(await page('/runs?trigger=cron')).not.toContain(runA);
    expect(await page('/runs?to=2000-01-01')).toContain('No run matches.');
  });
});

describe('approvals', () => {
  it('the approver sees who started the run and the next step filled in; only permitted people get the form; the inbox lists it', async () => {
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'close after a yes',
      inputs: [{ key: 'id', description: 'row', type: 'integer' }],
      steps: [
        {
          name: 'ok',
          action: { __type__: 'approval', reviews_required: 1 },
          permissions: [{ role: 'member' }],
        },
        {
          name: 'close',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `update ${TABLE} set state = 'closed' where id = \${id}`,
            timeout_seconds: null,
          },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = await runWorkflow(env, created.body.id, { id: 2 });
    await env.waitRun(created.body.id, runId, (r) => r.status === 'waiting_for_approval');
    const path = `/runs/${created.body.id}/${runId}`;
    // The super admin started it (with their key), so may not approve it: context, but no form.
    const adminView = await page(path);
    // Started with the super admin's key: theirs, the key named beside them.
    expect(adminView).toContain('root@example.test (with an API key)');
    expect(adminView).toContain(`update ${TABLE} set state = &#39;closed&#39; where id = 2`);
    expect(adminView).toContain('you started this run');
    expect(adminView).not.toContain('name="decision" value="approve"');
    // A member is: the form, and the run in their Reviews inbox.
    const [org] = await env.svc.deps.sql<{ id: string }[]>`select id from organizations`;
    await createUser(env.svc.deps.sql, {
      orgId: org!.id,
      email: 'approver.member@example.test',
      role: 'member',
      password: 'approver password 1',
    });
    const member = await signIn(env.svc, 'approver.member@example.test', 'approver password 1');
    const memberView = await (await env.svc.fetch(path, { headers: { cookie: member.cookie } })).text();
    expect(memberView).toContain('name="decision" value="approve"');
    const inbox = await (await env.svc.fetch('/reviews', { headers: { cookie: member.cookie } })).text();
    expect(inbox).toContain(`href="${path}"`);
    expect(inbox).toContain('close after a yes</a>');
    expect(inbox).toContain('waiting at step ok');
    // The same inbox over REST (GET /api/v1/workflows/approvals): the member's, not the starter's.
    const waitingFor = async (cookie: string) =>
      (
        (await (await env.svc.fetch('/api/v1/workflows/approvals', { headers: { cookie } })).json()) as {
          data: { run_id: string; step: string }[];
        }
      ).data;
    expect(await waitingFor(member.cookie)).toContainEqual(
      expect.objectContaining({ run_id: runId, step: 'ok' }),
    );
    expect((await waitingFor(admin.cookie)).map((r) => r.run_id)).not.toContain(runId);
  });
});

describe('re-run', () => {
  it('starts a new run with edited inputs, recorded as a re-run in the audit log', async () => {
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'echo',
      inputs: [{ key: 'who', description: '', type: 'string' }],
      steps: [
        { name: 'gate', action: { __type__: 'condition', expression: '${who} == "Ada"', on_false: 'fail' } },
      ],
    });
    const first = await runWorkflow(env, created.body.id, { who: 'Bo' });
    expect((await env.waitRun(created.body.id, first)).status).toBe('failed');
    const res = await env.svc.fetch(`/runs/${created.body.id}/${first}/rerun`, {
      method: 'POST',
      headers: { cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrf, 'input.who': 'Ada' }),
      redirect: 'manual',
    });
    const second = /run_[0-9A-Z]{26}/.exec(res.headers.get('location') ?? '')?.[0];
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const run = await env.waitRun(created.body.id, second!);
    expect(run.status).toBe('succeeded');
    expect(run.inputs).toEqual({ who: 'Ada' });
    const [event] = await env.svc.deps.sql<{ subject: { rerun_of: string } }[]>`
      select subject from audit_log where event = 'run.rerun' and subject->>'run_id' = ${second!}`;
    expect(event!.subject.rerun_of).toBe(first);
  });

  it('POST /api/v1/workflows/:id/runs/:runId/rerun: the original inputs, or typed new ones, audited alike', async () => {
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'echo over REST',
      inputs: [{ key: 'who', description: '', type: 'string' }],
      steps: [
        { name: 'gate', action: { __type__: 'condition', expression: '${who} == "Ada"', on_false: 'fail' } },
      ],
    });
    const first = await runWorkflow(env, created.body.id, { who: 'Ada' });
    await env.waitRun(created.body.id, first);
    const base = `/api/v1/workflows/${created.body.id}/runs/${first}/rerun`;
    const same = await env.api<{ run_id: string; rerun_of: string }>('POST', base);
    expect(same.status, JSON.stringify(same.body)).toBe(201);
    expect(same.body.rerun_of).toBe(first);
    expect((await env.waitRun(created.body.id, same.body.run_id)).inputs).toEqual({ who: 'Ada' });
    const edited = await env.api<{ run_id: string }>('POST', base, { who: 'Bo' });
    expect(edited.status).toBe(201);
    expect((await env.waitRun(created.body.id, edited.body.run_id)).status).toBe('failed');
    // A wrong type is the 422 of any start, naming the input.
    const wrong = await env.api<{ errors: { path: string }[] }>('POST', base, { who: 5 });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors.map((e) => e.path)).toContain('who');
    const events = await env.svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where event = 'run.rerun' and subject->>'rerun_of' = ${first}`;
    expect(events[0]!.n).toBe(2);
  });
});

describe('retry from the failed step', () => {
  it('does not run the completed query again; only the starter may retry; a changed definition is refused', async () => {
    const member = await makeUser(env, 'member', 'retry.member@example.test');
    let failing = true;
    env.receiver.on('/flaky', () =>
      failing ? { status: 500, body: { error: 'down' } } : { status: 200, body: { ok: true } },
    );
    const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'insert then notify',
      steps: [
        {
          name: 'insert',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `insert into ${TABLE} values (99, 'new')`,
            timeout_seconds: null,
          },
        },
        {
          name: 'notify',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/flaky`, method: 'POST', body: '{}' },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const first = await runWorkflow(env, created.body.id, {});
    const failed = await env.waitRun(created.body.id, first);
    expect(failed.status).toBe('failed');
    const count = () =>
      withHarnessPostgres(
        async (sql) =>
          (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(TABLE)} where id = 99`)[0]!.n,
      );
    expect(await count()).toBe(1);
    // Someone else may not retry it.
    const other = await env.api(
      'POST',
      `/api/v1/workflows/${created.body.id}/runs/${first}/retry`,
      {},
      member.bearer,
    );
    expect(other.status).toBe(403);
    failing = false;
    const retried = await env.api<{ run_id: string }>(
      'POST',
      `/api/v1/workflows/${created.body.id}/runs/${first}/retry`,
      {},
    );
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const run = await env.waitRun(created.body.id, retried.body.run_id);
    expect(run.status, run.error ?? '').toBe('succeeded');
    // The insert ran once: its output is reused, not recomputed.
    expect(await count()).toBe(1);
    expect(run.steps![0]!.status).toBe('succeeded');
    const [event] = await env.svc.deps.sql<{ subject: { retry_of: string; from_step: string } }[]>`
      select subject from audit_log where event = 'run.retry' and subject->>'run_id' = ${retried.body.run_id}`;
    expect(event!.subject).toMatchObject({ retry_of: first, from_step: 'notify' });
    // A succeeded run, or one whose steps before the failure changed, is not retried.
    expect(
      (await env.api('POST', `/api/v1/workflows/${created.body.id}/runs/${retried.body.run_id}/retry`, {}))
        .status,
    ).toBe(409);
    failing = true;
    const second = await runWorkflow(env, created.body.id, {});
    await env.waitRun(created.body.id, second);
    await withHarnessPostgres((sql) => sql`delete from ${sql(TABLE)} where id = 99`);
    const patched = await env.api('PATCH', `/api/v1/workflows/${created.body.id}`, {
      steps: [
        {
          name: 'insert_again',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `insert into ${TABLE} values (99, 'x')`,
            timeout_seconds: null,
          },
        },
        {
          name: 'notify',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/flaky`, method: 'POST', body: '{}' },
        },
      ],
    });
    expect(patched.status).toBe(200);
    const refused = await env.api<{ detail: string }>(
      'POST',
      `/api/v1/workflows/${created.body.id}/runs/${second}/retry`,
      {},
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('re-run it instead');
  });
});

describe('approval expiry', () => {
  it('ends the run as configured when nobody decides in time: fail, or a rejection by expiry', async () => {
    const make = async (onTimeout: 'fail' | 'reject') =>
      (
        await env.api<{ id: string }>('POST', '/api/v1/workflows', {
          name: `expires (${onTimeout})`,
          steps: [
            {
              name: 'ok',
              action: {
                __type__: 'approval',
                reviews_required: 1,
                timeout_seconds: 1,
                on_timeout: onTimeout,
              },
            },
          ],
        })
      ).body.id;
    const failing = await make('fail');
    const rejecting = await make('reject');
    const [a, b] = await Promise.all([runWorkflow(env, failing, {}), runWorkflow(env, rejecting, {})]);
    const failed = await env.waitRun(failing, a);
    expect(failed.status).toBe('expired');
    expect(failed.error).toContain('no decision within 1 s');
    const rejected = await env.waitRun(rejecting, b);
    expect(rejected.status).toBe('rejected');
    expect(rejected.error).toContain('rejected on expiry');
    expect(rejected.approvals).toEqual([expect.objectContaining({ email: 'expiry', decision: 'reject' })]);
    const bad = await env.api<{ errors: Array<{ path: string }> }>('POST', '/api/v1/workflows', {
      name: 'bad expiry',
      steps: [{ name: 'ok', action: { __type__: 'approval', timeout_seconds: 1, on_timeout: 'approve' } }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]!.path).toBe('steps.0.action.on_timeout');
  });
});
