// The run page's approval form and POST /api/v1/workflows/:id/runs/:runId/approvals share one
// schema, checked by decideApproval (automation/approval-input.ts): an unknown decision gets the
// same field error through either door, and the run still waits, undecided.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { signIn } from '../helpers/service.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

let env: WorkflowEnv;
let member: { cookie: string; csrf: string };
let workflowId: string;
let runId: string;

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: true });
  const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'twin approval',
    steps: [
      {
        name: 'ok',
        action: { __type__: 'approval', reviews_required: 1 },
        permissions: [{ role: 'member' }],
      },
    ],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  workflowId = created.body.id;
  // Started with the super admin's key; a member (not the initiator) may decide it.
  runId = await runWorkflow(env, workflowId);
  await env.waitRun(workflowId, runId, (r) => r.status === 'waiting_for_approval');
  const [org] = await env.svc.deps.sql<{ id: string }[]>`select id from organizations`;
  await createUser(env.svc.deps.sql, {
    orgId: org!.id,
    email: 'twin.approver@example.test',
    role: 'member',
    password: 'twin approver password 1',
  });
  member = await signIn(env.svc, 'twin.approver@example.test', 'twin approver password 1');
});
afterAll(async () => env?.stop());

describe('the approval form and POST /api/v1/workflows/:id/runs/:runId/approvals', () => {
  const cases: { name: string; json: Record<string, unknown>; form: Record<string, string> }[] = [
    { name: 'an unknown decision', json: { decision: 'maybe' }, form: { decision: 'maybe' } },
    { name: 'an empty decision', json: { decision: '' }, form: { decision: '' } },
    {
      name: 'an unknown decision and a comment too long',
      json: { decision: 'yes', comment: 'c'.repeat(2001) },
      form: { decision: 'yes', comment: 'c'.repeat(2001) },
    },
  ];
  for (const c of cases)
    it(`answers the same field errors: ${c.name}`, async () => {
      const res = await env.svc.fetch(`/api/v1/workflows/${workflowId}/runs/${runId}/approvals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: member.cookie, 'x-csrf-token': member.csrf },
        body: JSON.stringify(c.json),
      });
      expect(res.status).toBe(422);
      const problem = (await res.json()) as { detail: string; errors: { path: string }[] };
      expect(problem.errors.map((e) => e.path)).toContain('decision');

      const page = await env.svc.fetch(`/runs/${workflowId}/${runId}/approvals`, {
        method: 'POST',
        headers: { cookie: member.cookie },
        body: new URLSearchParams({ _csrf: member.csrf, ...c.form }),
        redirect: 'manual',
      });
      expect(page.status).toBe(303);
      const to = new URL(page.headers.get('location') ?? '', 'http://page.invalid');
      expect(to.searchParams.get('error')).toBe(problem.detail);
    });

  it('decided nothing: the run still waits, with no approval', async () => {
    const run = await env.waitRun(workflowId, runId, (r) => r.status === 'waiting_for_approval');
    expect(run.status).toBe('waiting_for_approval');
    const res = await env.svc.fetch(`/api/v1/workflows/${workflowId}/runs/${runId}`, {
      headers: { cookie: member.cookie },
    });
    expect(JSON.stringify(await res.json())).not.toContain('twin.approver@example.test');
  });
});
