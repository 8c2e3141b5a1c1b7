// The per-credential limit holds for a workflow query step a person launches — the step
// runs as them — while the organization key's runs are not limited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv } from './setup.ts';

let env: WorkflowEnv;
let member: { userId: string; bearer: Record<string, string> };
let workflowId: string;

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: true });
  member = await makeUser(env, 'member', 'wf-cred-member@example.test');
  const patched = await env.api('PATCH', `/api/v1/desk/databases/${env.db.id}`, {
    credentials: [{ id: env.db.credentialId, restrict_access: true }],
  });
  expect(patched.status).toBe(200);
  const created = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'restricted credential step',
    steps: [
      {
        name: 'q',
        action: {
          __type__: 'query',
          credential_id: env.db.credentialId,
          query: 'select 1 as one',
          timeout_seconds: null,
        },
      },
    ],
  });
  expect(created.status).toBe(201);
  workflowId = created.body.id;
});
afterAll(async () => env?.stop());

describe('a restricted credential in a workflow query step', () => {
  it('fails the step of a member it is not granted to, naming no credential', async () => {
    const runId = await runWorkflow(env, workflowId, {}, member.bearer);
    const run = await env.waitRun(workflowId, runId);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run)).toContain('no such credential');
  });

  it('runs for the member once granted, and always for the organization key', async () => {
    const grant = await env.api(
      'POST',
      `/api/v1/desk/databases/${env.db.id}/credentials/${env.db.credentialId}/grants`,
      { user_id: member.userId },
    );
    expect(grant.status).toBe(201);
    const mine = await env.waitRun(workflowId, await runWorkflow(env, workflowId, {}, member.bearer));
    expect(mine.status).toBe('succeeded');
    const org = await env.waitRun(workflowId, await runWorkflow(env, workflowId, {}));
    expect(org.status).toBe('succeeded');
  });
});
