// Definitions that can finish, and runs that say how they ended: an approval needing more people
// than may approve, or naming someone who does not exist, is refused at save; a rejected run ends
// `rejected` and is not retried; an expired approval ends `expired`; a timed-out api call names
// its step, host and timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

let env: WorkflowEnv;
let approver: Awaited<ReturnType<typeof makeUser>>;
let member: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  env = await startWorkflowEnv();
  approver = await makeUser(env, 'admin', 'checks.approver@example.test');
  member = await makeUser(env, 'member', 'checks.member@example.test');
});
afterAll(async () => env?.stop());

type Errors = { errors: Array<{ path: string; message: string }> };

function approvalWorkflow(action: Record<string, unknown>, permissions: unknown[]) {
  return {
    name: 'needs sign-off',
    steps: [{ name: 'sign_off', action: { __type__: 'approval', ...action }, permissions }],
  };
}

describe('approval steps that can complete', () => {
  it('two approvals with one listed approver: 422 naming reviews_required, and nothing saved', async () => {
    const before = (await env.api<{ data: unknown[] }>('GET', '/api/v1/workflows')).body.data.length;
    const body = approvalWorkflow({ reviews_required: 2 }, [{ user_id: approver.userId }]);
    const res = await env.api<Errors>('POST', '/api/v1/workflows', body);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      {
        path: 'steps.0.action.reviews_required',
        message: expect.stringContaining('needs 2 approvals but only 1 person may approve'),
      },
    ]);
    expect((await env.api<{ data: unknown[] }>('GET', '/api/v1/workflows')).body.data.length).toBe(before);
    // The editor's as-you-type check says the same.
    const checked = await env.api<Errors>('POST', '/api/v1/workflows/validate', body);
    expect(checked.body.errors[0]!.path).toBe('steps.0.action.reviews_required');
  });

  it('a disabled approver does not count; a role is not counted (its holders change)', async () => {
    const gone = await makeUser(env, 'member', 'checks.disabled@example.test');
    await env.svc.deps.sql`update users set disabled_at = now() where id = ${gone.userId}`;
    const res = await env.api<Errors>(
      'POST',
      '/api/v1/workflows',
      approvalWorkflow({ reviews_required: 2 }, [{ user_id: approver.userId }, { user_id: gone.userId }]),
    );
    expect(res.status).toBe(422);
    expect(res.body.errors[0]!.path).toBe('steps.0.action.reviews_required');
    const byRole = await env.api(
      'POST',
      '/api/v1/workflows',
      approvalWorkflow({ reviews_required: 3 }, [{ role: 'member' }]),
    );
    expect(byRole.status).toBe(201);
  });

  it('an approver id that does not exist: 422 naming it', async () => {
    const res = await env.api<Errors>(
      'POST',
      '/api/v1/workflows',
      approvalWorkflow({ reviews_required: 1 }, [{ user_id: 'usr_01JZZZZZZZZZZZZZZZZZZZZZZZ' }]),
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toContainEqual({
      path: 'steps.0.permissions.0.user_id',
      message: 'no such person in this organization',
    });
  });

  it('enough approvers: saved', async () => {
    const res = await env.api(
      'POST',
      '/api/v1/workflows',
      approvalWorkflow({ reviews_required: 2 }, [{ user_id: approver.userId }, { user_id: member.userId }]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await env.api<{ id: string }>('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe('how an approval ends a run', () => {
  it('a rejection ends it rejected, and its retry is refused with the reason', async () => {
    const wf = await create(approvalWorkflow({ reviews_required: 1 }, [{ user_id: approver.userId }]));
    const runId = await runWorkflow(env, wf);
    await env.waitRun(wf, runId, (r) => r.status === 'waiting_for_approval');
    await env.api(
      'POST',
      `/api/v1/workflows/${wf}/runs/${runId}/approvals`,
      { decision: 'reject', comment: 'not now' },
      approver.bearer,
    );
    const run = await env.waitRun(wf, runId);
    expect(run).toMatchObject({
      status: 'rejected',
      error: 'step sign_off: rejected by checks.approver@example.test: not now',
    });
    const retry = await env.api('POST', `/api/v1/workflows/${wf}/runs/${runId}/retry`, {});
    expect(retry.status).toBe(409);
    expect(retry.body.detail).toBe(
      'the run was rejected at step sign_off: a rejection is final, start a new run to ask again',
    );
  });

  it('an expiry with on_timeout reject ends it rejected (by expiry); with fail, expired and retryable', async () => {
    const rejecting = await create(approvalWorkflow({ timeout_seconds: 1, on_timeout: 'reject' }, []));
    const failing = await create(approvalWorkflow({ timeout_seconds: 1, on_timeout: 'fail' }, []));
    const [a, b] = await Promise.all([runWorkflow(env, rejecting), runWorkflow(env, failing)]);
    const rejected = await env.waitRun(rejecting, a);
    expect(rejected.status).toBe('rejected');
    expect(rejected.approvals).toEqual([expect.objectContaining({ email: 'expiry', decision: 'reject' })]);
    expect((await env.api('POST', `/api/v1/workflows/${rejecting}/runs/${a}/retry`, {})).status).toBe(409);
    const expired = await env.waitRun(failing, b);
    expect(expired).toMatchObject({ status: 'expired', error: 'step sign_off: no decision within 1 s' });
    // An expiry is nobody's decision: asking again is a retry of the approval step.
    const retry = await env.api<{ run_id: string }>(
      'POST',
      `/api/v1/workflows/${failing}/runs/${b}/retry`,
      {},
    );
    expect(retry.status).toBe(201);
    const again = await env.waitRun(failing, retry.body.run_id);
    expect(again.status).toBe('expired');
  });
});

describe('a timed-out api call', () => {
  it('names the step, the host and the timeout', async () => {
    env.receiver.on('/slow', () => ({ status: 200, body: { late: true }, delayMs: 4000 }));
    const host = new URL(env.receiver.url).host;
    const wf = await create({
      name: 'slow endpoint',
      steps: [
        {
          name: 'slow_call',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/slow?token=secret`, timeout_seconds: 1 },
        },
      ],
    });
    const run = await env.waitRun(wf, await runWorkflow(env, wf), undefined, 60_000);
    expect(run.status).toBe('failed');
    expect(run.error).toBe(
      `step slow_call: GET to ${host} timed out: no complete response within 1 s (timeout_seconds 1)`,
    );
    expect(run.error).not.toContain('token');
  });
});
