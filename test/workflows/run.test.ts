// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// A workflow with every step kind runs on the real Temporal dev server against real PostgreSQL, a
// local Slack Web API peer and a local HTTP receiver that verifies the service JWT with the JWKS.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeUser,
  type RunView,
  runWorkflow,
  startWorkflowEnv,
  type WorkflowEnv,
  type WorkflowView,
} from './setup.ts';

let env: WorkflowEnv;
let initiator: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;
let approver: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  env = await startWorkflowEnv();
  initiator = await makeUser(env, 'admin', 'initiator@example.test');
  member = await makeUser(env, 'member', 'member@example.test');
  approver = await makeUser(env, 'admin', 'approver@example.test');
});
afterAll(async () => env?.stop());

async function create(body: Record<string, unknown>): Promise<WorkflowView> {
  const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('a workflow with every step kind', () => {
  let wf: WorkflowView;
  let runId: string;

  beforeAll(async () => {
    env.receiver.on('/hook', (req) => ({
      status: 201,
      body: { result: 'accepted', echo: JSON.parse(req.body) },
    }));
    wf = await create({
      name: 'Refund customer',
      inputs: [
        { key: 'customer_id', description: 'Customer to refund', type: 'integer' },
        { key: 'note', description: 'Why', type: 'string' },
      ],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: "select ${customer_id}::int as id, 'alice@example.com' as email, 42 as total",
            timeout_seconds: 10,
          },
        },
        {
          name: 'notify',
          action: {
            __type__: 'chat',
            chat_channel: '#ops-alerts',
            message: 'Refund for ${step.lookup.output.rows[0][1]}: ${step.lookup.output.rows[0][2]}',
            link_text: 'Open the run',
          },
        },
        {
          name: 'never',
          condition: '${step.lookup.output.num_rows} == 0',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/never`, method: 'GET' },
        },
        {
          name: 'big_enough',
          action: {
            __type__: 'condition',
            expression: '${step.lookup.output.rows[0][2]} > 10',
            on_false: 'fail',
          },
        },
        {
          name: 'sign_off',
          action: { __type__: 'approval', reviews_required: 1 },
          permissions: [{ role: 'admin' }],
        },
        {
          name: 'call',
          condition: 'step.sign_off.output.approved_by[0].email != ""',
          action: {
            __type__: 'api',
            endpoint: `${env.receiver.url}/hook?customer=\${customer_id}`,
            method: 'POST',
            headers: { Authorization: 'Bearer downstream-s3cret' },
            body: '{"email": "${step.lookup.output.rows[0][1]}", "id": "${customer_id}", "note": "${note}"}',
            expected_status: 201,
            include_service_jwt: true,
          },
        },
        {
          name: 'reply',
          action: {
            __type__: 'chat_reply',
            step_name: 'notify',
            message: 'Done: ${step.call.output.body.result}',
          },
        },
      ],
    });
    runId = await runWorkflow(env, wf.id, { customer_id: 7, note: 'duplicate charge' }, initiator.bearer);
  });

  it('waits at the approval step, with earlier outputs visible', async () => {
    const run = await env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    const steps = Object.fromEntries(run.steps!.map((s) => [s.name, s]));
    expect(steps.lookup).toMatchObject({
      status: 'succeeded',
      output: {
        columns: ['id', 'email', 'total'],
        rows: [[7, 'alice@example.com', 42]],
        num_rows: 1,
        command: 'SELECT',
      },
    });
    expect(steps.notify!.status).toBe('succeeded');
    expect(steps.never!.status).toBe('skipped');
    expect(steps.big_enough).toMatchObject({ status: 'succeeded', output: { result: true } });
    expect(steps.sign_off!.status).toBe('waiting');
    expect(steps.call!.status).toBe('pending');
    expect(run.trigger).toBe('manual');
  });

  it('refuses the initiator, an unpermitted user and an API key, synchronously', async () => {
    const path = `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`;
    const self = await env.api('POST', path, { decision: 'approve' }, initiator.bearer);
    expect(self.status).toBe(403);
    expect(self.body.detail).toMatch(/started the run/);
    const notPermitted = await env.api('POST', path, { decision: 'approve' }, member.bearer);
    expect(notPermitted.status).toBe(403);
    expect(notPermitted.body.detail).toMatch(/not among the approvers/);
    const key = await env.api('POST', path, { decision: 'approve' });
    expect(key.status).toBe(403);
    // Even marked for acting by a super admin, a key never approves "as" a permitted approver.
    const boss = await makeUser(env, 'super_admin', 'boss@example.test');
    const keyId = `key_${env.svc.apiKey.split('_')[1]}`;
    expect(
      (await env.api('PATCH', `/api/v1/api-keys/${keyId}`, { act_as_allowed: true }, boss.bearer)).status,
    ).toBe(204);
    const acting = await env.api(
      'POST',
      path,
      { decision: 'approve' },
      { 'x-act-as-user': 'approver@example.test' },
    );
    expect(acting.status).toBe(403);
    const run = await env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    expect(run.approvals).toEqual([]);
  });

  it('continues after a permitted approval and succeeds', async () => {
    const res = await env.api<{ approvals: number; required: number }>(
      'POST',
      `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`,
      { decision: 'approve', comment: 'ok' },
      approver.bearer,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ approvals: 1, required: 1 });
    const run = await env.waitRun(wf.id, runId);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.approvals).toMatchObject([
      { step: 'sign_off', user_id: approver.userId, decision: 'approve' },
    ]);
    const steps = Object.fromEntries(run.steps!.map((s) => [s.name, s]));
    expect(steps.call).toMatchObject({
      status: 'succeeded',
      output: { status_code: 201, body: { result: 'accepted' } },
    });
    for (const s of run.steps!) {
      if (s.status === 'succeeded')
        expect(Date.parse(s.finished_at!)).toBeGreaterThanOrEqual(Date.parse(s.started_at!));
    }
  });

  it('sent the API request with the stored header, the rendered body and a verifiable JWT', async () => {
    const hook = env.receiver.requests.find((r) => r.path.startsWith('/hook'))!;
    expect(hook.method).toBe('POST');
    expect(hook.path).toBe('/hook?customer=7');
    expect(hook.headers.authorization).toBe('Bearer downstream-s3cret');
    expect(JSON.parse(hook.body)).toEqual({ email: 'alice@example.com', id: 7, note: 'duplicate charge' });
    const jwks = createRemoteJWKSet(new URL(`${env.svc.url}/.well-known/jwks.json`));
    const endpoint = `${env.receiver.url}/hook?customer=7`;
    const { payload, protectedHeader } = await jwtVerify(String(hook.headers['x-service-jwt']), jwks, {
      audience: endpoint,
      issuer: env.svc.deps.config.baseUrl,
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: runId, workflow_id: wf.id });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(env.receiver.requests.some((r) => r.path === '/never')).toBe(false);
  });

  it('posted the chat message and replied in its thread', async () => {
    const [first, reply] = env.chat.messages.slice(-2);
    expect(first).toMatchObject({ channel: 'C0000000002', thread_ts: null });
    expect(first!.text).toContain('Refund for alice@example.com: 42');
    expect(first!.text).toContain(`|Open the run>`);
    expect(first!.text).toContain(runId);
    expect(reply).toMatchObject({ channel: 'C0000000002', thread_ts: first!.ts, text: 'Done: accepted' });
    const run = await env.waitRun(wf.id, runId);
    const notify = run.steps!.find((s) => s.name === 'notify')!;
    expect(notify.output).toEqual({ channel: 'C0000000002', timestamp: first!.ts });
  });

  it('lists the run and never shows the header value', async () => {
    const runs = await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${wf.id}/runs`);
    expect(runs.body.data.map((r) => r.id)).toContain(runId);
    const got = await env.api<WorkflowView>('GET', `/api/v1/workflows/${wf.id}`);
    expect(JSON.stringify(got.body)).not.toContain('downstream-s3cret');
    expect(got.body.steps[5]!.action.headers).toEqual({ Authorization: null });
  });
});

describe('condition steps and failures', () => {
  it('a false condition with on_false succeed ends the run as succeeded, skipping the rest', async () => {
    const wf = await create({
      name: 'stop quietly',
      steps: [
        { name: 'gate', action: { __type__: 'condition', expression: '1 > 2', on_false: 'succeed' } },
        { name: 'after', action: { __type__: 'api', endpoint: `${env.receiver.url}/after-succeed` } },
      ],
    });
    const run = await env.waitRun(wf.id, await runWorkflow(env, wf.id));
    expect(run.status).toBe('succeeded');
    expect(run.steps!.map((s) => s.status)).toEqual(['succeeded', 'skipped']);
    expect(env.receiver.requests.some((r) => r.path === '/after-succeed')).toBe(false);
  });

  it('a false condition with on_false fail ends the run as failed', async () => {
    const wf = await create({
      name: 'stop loudly',
      steps: [
        { name: 'gate', action: { __type__: 'condition', expression: 'false', on_false: 'fail' } },
        { name: 'after', action: { __type__: 'api', endpoint: `${env.receiver.url}/after-fail` } },
      ],
    });
    const run = await env.waitRun(wf.id, await runWorkflow(env, wf.id));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/condition step gate was false/);
    expect(env.receiver.requests.some((r) => r.path === '/after-fail')).toBe(false);
  });

  it('an unexpected status fails the run with the status and a bounded excerpt of the body', async () => {
    env.receiver.on('/broken', () => ({ status: 500, body: `upstream exploded ${'x'.repeat(5000)}` }));
    const wf = await create({
      name: 'broken api',
      steps: [
        {
          name: 'call',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/broken`, expected_status: 200 },
        },
      ],
    });
    const run = await env.waitRun(wf.id, await runWorkflow(env, wf.id));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/expected status 200 but got 500: upstream exploded x+/);
    expect(run.error!.length).toBeLessThan(500);
    // Not retried: an unexpected status is final.
    expect(env.receiver.requests.filter((r) => r.path === '/broken')).toHaveLength(1);
  });

  it('refuses link-local and metadata addresses when the definition is saved', async () => {
    // The run-time check (and the network namespace that keeps a regression on this machine) is
    // in test/security/outbound.test.ts.
    const res = await env.api<{ errors: Array<{ path: string; message: string }> }>(
      'POST',
      '/api/v1/workflows',
      {
        name: 'metadata',
        steps: [
          {
            name: 'steal',
            action: { __type__: 'api', endpoint: 'http://169.254.169.254/latest/meta-data/' },
          },
        ],
      },
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { path: 'steps.0.action.endpoint', message: expect.stringMatching(/refused by the network policy/) },
    ]);
  });

  it('a rejection ends the run rejected', async () => {
    const wf = await create({
      name: 'rejected',
      steps: [
        {
          name: 'ok',
          action: { __type__: 'approval', reviews_required: 1 },
          permissions: [{ user_id: approver.userId }],
        },
      ],
    });
    const runId = await runWorkflow(env, wf.id);
    await env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    const res = await env.api(
      'POST',
      `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`,
      { decision: 'reject', comment: 'not today' },
      approver.bearer,
    );
    expect(res.status).toBe(200);
    const run = await env.waitRun(wf.id, runId);
    expect(run.status).toBe('rejected');
    expect(run.error).toMatch(/rejected by approver@example.test: not today/);
  });

  it('a run can be canceled and records itself as canceled', async () => {
    const wf = await create({
      name: 'cancel me',
      steps: [{ name: 'wait', action: { __type__: 'approval' } }],
    });
    const runId = await runWorkflow(env, wf.id);
    await env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
    const res = await env.api('POST', `/api/v1/workflows/${wf.id}/runs/${runId}/cancel`);
    expect(res.status).toBe(202);
    const run = await env.waitRun(wf.id, runId);
    expect(run.status).toBe('canceled');
    expect(run.steps![0]!.status).toBe('canceled');
  });
});
