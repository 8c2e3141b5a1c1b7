// biome-ignore-all lint/suspicious/noTemplateCurlyInString: step expressions are expression-language source.
// No orphaned or stale runs: a retried start with its Idempotency-Key names one run; a row whose
// execution was never started is started (or failed with a reason) by the run sweep; a run ended
// in Temporal from outside Countersign shows as ended within seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEVER_STARTED, startRunSweep } from '../../automation/run-sweep.ts';
import { buildSnapshot } from '../../automation/snapshot.ts';
import { newId } from '../../store/ids.ts';
import { insertRun } from '../../store/workflow-runs.ts';
import { findWorkflowById } from '../../store/workflows.ts';
import {
  makeUser,
  type RunView,
  runWorkflow,
  startWorkflowEnv,
  type WorkflowEnv,
  type WorkflowView,
} from './setup.ts';

let env: WorkflowEnv;
let stopSweep: () => void;
let gate: WorkflowView;
let waiting: WorkflowView;

beforeAll(async () => {
  env = await startWorkflowEnv();
  gate = await create({
    name: 'gate',
    inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
    steps: [{ name: 'check', action: { __type__: 'condition', expression: '${n} > 2', on_false: 'fail' } }],
  });
  waiting = await create({
    name: 'waits for a person',
    steps: [{ name: 'sign_off', action: { __type__: 'approval', reviews_required: 1 } }],
  });
  // The sweep `serve` runs (cli/main.ts), here beside the test's API.
  stopSweep = startRunSweep(env.svc.deps, 500);
});
afterAll(async () => {
  stopSweep?.();
  await env?.stop();
});

async function create(body: Record<string, unknown>): Promise<WorkflowView> {
  const res = await env.api<WorkflowView>('POST', '/api/v1/workflows', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function runsOf(wf: WorkflowView): Promise<RunView[]> {
  return (await env.api<{ data: RunView[] }>('GET', `/api/v1/workflows/${wf.id}/runs?limit=200`)).body.data;
}

/** Polls the run list (which never reconciles on read: only the sweep changes it). */
async function listedUntil(wf: WorkflowView, runId: string, ok: (r: RunView) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const run = (await runsOf(wf)).find((r) => r.id === runId);
    if (run && ok(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} stayed ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('Idempotency-Key on POST …/run', () => {
  it('a retried start with the same key and inputs names the same run, and starts one run', async () => {
    const before = (await runsOf(gate)).length;
    const headers = { 'idempotency-key': '"retry-8d1f"' };
    const first = await env.api('POST', `/api/v1/workflows/${gate.id}/run`, { n: 5 }, headers);
    const second = await env.api('POST', `/api/v1/workflows/${gate.id}/run`, { n: 5 }, headers);
    expect(first.status).toBe(200);
    expect(second).toEqual(first);
    // Concurrent retries too (a client that gave up on a slow answer).
    const burst = await Promise.all(
      [1, 2, 3].map(() => env.api('POST', `/api/v1/workflows/${gate.id}/run`, { n: 5 }, headers)),
    );
    for (const b of burst) expect(b).toEqual(first);
    const runId = /run_[0-9A-Z]{26}/.exec(String(first.body))![0];
    expect((await env.waitRun(gate.id, runId)).status).toBe('succeeded');
    expect((await runsOf(gate)).length).toBe(before + 1);
  });

  it('the same key with other inputs is a 422 naming the header, and starts nothing', async () => {
    const headers = { 'idempotency-key': 'reuse-41' };
    const first = await runWorkflow(env, gate.id, { n: 5 }, headers);
    const before = (await runsOf(gate)).length;
    const other = await env.api('POST', `/api/v1/workflows/${gate.id}/run`, { n: 6 }, headers);
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual([expect.objectContaining({ path: 'Idempotency-Key' })]);
    expect((await runsOf(gate)).length).toBe(before);
    expect(first).toMatch(/^run_/);
  });

  it('a key is the caller’s own: another caller with the same key starts its own run', async () => {
    const person = await makeUser(env, 'admin', 'idem-person@example.test');
    const headers = { 'idempotency-key': 'shared-key' };
    const mine = await runWorkflow(env, gate.id, { n: 5 }, headers);
    const theirs = await runWorkflow(env, gate.id, { n: 5 }, { ...headers, ...person.bearer });
    expect(theirs).not.toBe(mine);
  });

  it('a malformed key is a 422 naming the header', async () => {
    const res = await env.api(
      'POST',
      `/api/v1/workflows/${gate.id}/run`,
      { n: 5 },
      { 'idempotency-key': '' },
    );
    expect(res.status).toBe(422);
    expect(res.body.errors![0]!.path).toBe('Idempotency-Key');
  });
});

/** A run row as `launch` writes it, with no execution: a process that stopped in between. */
async function orphanRow(wf: WorkflowView, ageSeconds: number): Promise<string> {
  const row = await findWorkflowById(env.svc.deps.sql, wf.id);
  const runId = newId('run');
  const inputs = { n: 7 };
  const snapshot = buildSnapshot(env.svc.deps.config, row!, {
    runId,
    trigger: 'api',
    initiatorUserId: null,
    inputs,
  });
  await insertRun(
    env.svc.deps.sql,
    {
      id: runId,
      workflow_id: wf.id,
      org_id: row!.org_id,
      trigger: 'api',
      initiator_user_id: null,
      initiator_api_key_id: null,
      inputs,
    },
    snapshot,
  );
  await env.svc.deps.sql`
    update workflow_runs set started_at = now() - make_interval(secs => ${ageSeconds}) where id = ${runId}`;
  return runId;
}

describe('runs whose execution was never started', () => {
  it('a recent one is started by the sweep and runs to its end', async () => {
    const runId = await orphanRow(gate, 6);
    const run = await listedUntil(gate, runId, (r) => r.finished_at !== null, 15_000);
    expect(run.status).toBe('succeeded');
  });

  it('an old one is failed by the sweep, saying why', async () => {
    const runId = await orphanRow(gate, 3600);
    const run = await listedUntil(gate, runId, (r) => r.finished_at !== null, 15_000);
    expect(run).toMatchObject({ status: 'failed', error: NEVER_STARTED });
  });

  it('can be canceled', async () => {
    stopSweep();
    try {
      const runId = await orphanRow(gate, 3600);
      const res = await env.api('POST', `/api/v1/workflows/${gate.id}/runs/${runId}/cancel`);
      expect(res.status).toBe(202);
      const run = (await runsOf(gate)).find((r) => r.id === runId)!;
      expect(run.status).toBe('canceled');
    } finally {
      stopSweep = startRunSweep(env.svc.deps, 500);
    }
  });
});

describe('runs ended in Temporal, outside Countersign', () => {
  it('a terminated run shows canceled within seconds, with the reason', async () => {
    const runId = await runWorkflow(env, waiting.id);
    await env.waitRun(waiting.id, runId, (r) => r.status === 'waiting_for_approval');
    await env.svc.deps.temporal!.client.workflow.getHandle(runId).terminate('operator pressed Terminate');
    const t0 = Date.now();
    const run = await listedUntil(waiting, runId, (r) => r.finished_at !== null, 15_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(run).toMatchObject({
      status: 'canceled',
      error: 'the run was terminated in Temporal, outside Countersign',
    });
  });

  it('reading a run reconciles it at once', async () => {
    stopSweep();
    try {
      const runId = await runWorkflow(env, waiting.id);
      await env.waitRun(waiting.id, runId, (r) => r.status === 'waiting_for_approval');
      await env.svc.deps.temporal!.client.workflow.getHandle(runId).terminate();
      const run = await env.api<RunView>('GET', `/api/v1/workflows/${waiting.id}/runs/${runId}`);
      expect(run.body).toMatchObject({ status: 'canceled' });
      expect(run.body.finished_at).not.toBeNull();
      // The step it was waiting at ended with it (not left `waiting`).
      expect(run.body.steps!.map((s) => s.status)).toEqual(['canceled']);
    } finally {
      stopSweep = startRunSweep(env.svc.deps, 500);
    }
  });
});
