// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv } from '../workflows/setup.ts';
import {
  type AgentProcess,
  registerAgent,
  registerPostgresBehindAgent,
  startAgentProcess,
  waitConnected,
} from './agent-process.ts';

// A workflow query step reaches a database behind an agent like any other: the worker's
// activities use the process's pools, which route through the agent's tunnel (verify-full TLS).
let env: WorkflowEnv;
let agent: AgentProcess;
let edge: { id: string; token: string };
let credentialId: string;

beforeAll(async () => {
  env = await startWorkflowEnv();
  edge = await registerAgent(env.svc, 'edge-wf');
  agent = startAgentProcess(env.svc.url, edge.token);
  await waitConnected(env.svc, edge.id);
  credentialId = (await registerPostgresBehindAgent(env.svc, edge.id, 'orders-behind-edge')).credentialId;
});
afterAll(async () => {
  await agent?.stop();
  await env?.stop();
});

describe('a workflow query step through an agent', () => {
  it('runs and its output feeds the next step', async () => {
    const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Lookup behind the edge',
      inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: credentialId,
            query: 'select ${n}::int * 2 as doubled, ssl from pg_stat_ssl where pid = pg_backend_pid()',
            timeout_seconds: 10,
          },
        },
        {
          name: 'check',
          action: {
            __type__: 'condition',
            expression: '${step.lookup.output.rows[0][0]} == 42',
            on_false: 'fail',
          },
        },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const runId = await runWorkflow(env, wf.body.id, { n: 21 });
    const run = await env.waitRun(wf.body.id, runId);
    expect(run.status, JSON.stringify(run)).toBe('succeeded');
    const lookup = run.steps!.find((s) => s.name === 'lookup')!;
    expect(lookup.output).toMatchObject({ rows: [[42, true]], num_rows: 1 });
  });

  it('fails the step with an error naming the agent when it is not connected', async () => {
    await agent.stop();
    await waitConnected(env.svc, edge.id, false);
    const wf = await env.api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Lookup while the edge is down',
      steps: [
        { name: 'lookup', action: { __type__: 'query', credential_id: credentialId, query: 'select 1' } },
      ],
    });
    const runId = await runWorkflow(env, wf.body.id);
    const run = await env.waitRun(wf.body.id, runId);
    expect(run.status).toBe('failed');
    const lookup = run.steps!.find((s) => s.name === 'lookup')!;
    expect(lookup.error).toBe(`agent "edge-wf" (${edge.id}) is not connected`);
  });
});
