// Durability: the worker process is killed (SIGKILL) while a step is in flight; a new worker picks
// the run up from Temporal's history. The run completes and no completed step runs again.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';
import { killWorker, startWorkerProcess } from './worker-child.ts';

let env: WorkflowEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await startWorkflowEnv({ worker: false });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await env?.stop();
});

describe('a worker killed mid-run', () => {
  it('is replaced, the run completes, and completed steps do not run again', async () => {
    let slowCalls = 0;
    let inFlight!: () => void;
    const slowArrived = new Promise<void>((resolve) => {
      inFlight = resolve;
    });
    // The first call hangs (its worker dies); the retry on the new worker answers at once.
    env.receiver.on('/slow', () => {
      slowCalls++;
      if (slowCalls === 1) {
        inFlight();
        return { status: 200, body: { attempt: 1 }, delayMs: 10_000 };
      }
      return { status: 200, body: { attempt: slowCalls } };
    });
    const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Survives a crash',
      steps: [
        { name: 'first', action: { __type__: 'api', endpoint: `${env.receiver.url}/first` } },
        {
          name: 'count',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select 1 as one' },
        },
        {
          name: 'slow',
          action: { __type__: 'api', endpoint: `${env.receiver.url}/slow`, timeout_seconds: 2 },
        },
        { name: 'last', action: { __type__: 'api', endpoint: `${env.receiver.url}/last` } },
      ],
    });
    expect(res.status).toBe(201);
    const wf = res.body;

    const first = await startWorkerProcess(env, children);
    const runId = await runWorkflow(env, wf.id);
    await slowArrived;
    await killWorker(first);
    await startWorkerProcess(env, children);

    const run = await env.waitRun(wf.id, runId, undefined, 60_000);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(run.steps!.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const hits = (path: string) => env.receiver.requests.filter((r) => r.path === path).length;
    expect(hits('/first')).toBe(1);
    expect(hits('/last')).toBe(1);
    // The step in flight when the worker died is the only one attempted again.
    expect(slowCalls).toBe(2);
  });
});
