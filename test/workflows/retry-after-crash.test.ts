// Retry from the failed step against a worker killed mid-run: the worker process dies
// (SIGKILL) while the API step is in flight, the step then fails on the worker that takes over,
// and a retry run on yet another fresh worker reuses the completed query step instead of running
// it again. The target table's row count is the proof: one row, however many runs.
import type { ChildProcess } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../store/ids.ts';
import { servers } from '../harness/servers.ts';
import { runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';
import { killWorker, startWorkerProcess } from './worker-child.ts';

const TABLE = `retry_marks_${newId('db').slice(-8).toLowerCase()}`;
let env: WorkflowEnv;
let target: postgres.Sql;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const pg = servers().postgres;
  target = postgres({ ...pg, username: pg.user, max: 1, onnotice: () => {} });
  await target.unsafe(`create table ${TABLE} (id serial primary key, note text not null)`);
  env = await startWorkflowEnv({ worker: false });
});
afterAll(async () => {
  for (const child of children) await killWorker(child);
  await env?.stop();
  await target?.unsafe(`drop table if exists ${TABLE}`);
  await target?.end();
});

const rowCount = async () => Number((await target.unsafe(`select count(*)::int as n from ${TABLE}`))[0]!.n);

describe('retry from the failed step after the worker was killed mid-run', () => {
  it('does not repeat completed steps and succeeds on a fresh worker', async () => {
    // The peer: the first call hangs (its worker is killed under it), the next fails with a 503
    // (an unexpected status: the step fails for good), and once `healthy` it answers 200.
    let calls = 0;
    let healthy = false;
    let arrived!: () => void;
    const firstCall = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    env.receiver.on('/flaky', () => {
      calls++;
      if (calls === 1) {
        arrived();
        return { status: 200, body: { late: true }, delayMs: 15_000 };
      }
      return healthy ? { status: 200, body: { ok: true } } : { status: 503, body: { error: 'unavailable' } };
    });
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Mark then call',
      inputs: [{ key: 'note', description: 'What to record', type: 'string' }],
      steps: [
        {
          name: 'mark',
          action: {
            __type__: 'query',
            credential_id: env.db.credentialId,
            query: `insert into ${TABLE} (note) values (\${note}) returning id`,
          },
        },
        {
          name: 'call',
          action: {
            __type__: 'api',
            method: 'POST',
            endpoint: `${env.receiver.url}/flaky`,
            body: '{"row": ${step.mark.output.rows[0][0]}}',
            timeout_seconds: 1,
          },
        },
        { name: 'after', action: { __type__: 'api', endpoint: `${env.receiver.url}/after` } },
      ],
    });
    expect(created.status).toBe(201);
    const wf = created.body;

    const first = await startWorkerProcess(env, children);
    const runId = await runWorkflow(env, wf.id, { note: 'once' });
    await firstCall;
    expect(await rowCount()).toBe(1);
    await killWorker(first);

    // The next worker picks the run up from Temporal's history: the query is not run again, the
    // timed-out call is attempted once more and fails for good on the 503.
    const second = await startWorkerProcess(env, children);
    const failed = await env.waitRun(wf.id, runId, undefined, 60_000);
    expect(failed.status).toBe('failed');
    expect(failed.steps!.map((s) => [s.name, s.status])).toEqual([
      ['mark', 'succeeded'],
      ['call', 'failed'],
      ['after', 'pending'],
    ]);
    expect(failed.steps![1]!.error).toContain('expected status 200 but got 503');
    expect(await rowCount()).toBe(1);
    await killWorker(second);

    healthy = true;
    const callsBefore = calls;
    await startWorkerProcess(env, children);
    const retry = await env.api<{ run_id: string; retry_of: string }>(
      'POST',
      `/api/v1/workflows/${wf.id}/runs/${runId}/retry`,
    );
    expect(retry.status).toBe(201);
    expect(retry.body.retry_of).toBe(runId);
    const done = await env.waitRun(wf.id, retry.body.run_id, undefined, 60_000);
    expect(done.status, done.error ?? '').toBe('succeeded');
    expect(done.steps!.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // The query's output was reused, not recomputed: still one row, and the call got its id.
    expect(await rowCount()).toBe(1);
    expect(done.steps![0]!.output).toMatchObject({ rows: [[1]] });
    expect(calls).toBe(callsBefore + 1);
    const lastCall = env.receiver.requests.filter((r) => r.path === '/flaky').at(-1)!;
    expect(JSON.parse(lastCall.body)).toEqual({ row: 1 });
    expect(env.receiver.requests.filter((r) => r.path === '/after')).toHaveLength(1);
  });
});
