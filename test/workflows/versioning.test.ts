// A rolling upgrade in the test topology, on a Temporal dev server of the test's own (so versions
// drain within seconds, not Temporal's default three minutes): the workers of release A, then
// those of release B beside them. Runs started by A's API run on A's workers to the end, runs
// started by B's API only on B's, a Schedule's runs follow the current version, and A's workers
// stop once the server reports A drained. Who ran each workflow task and activity is read from
// the run's history (the identity and deployment version Temporal recorded).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '../../automation/schedules.ts';
import { LATENCY_DYNAMIC_CONFIG } from '../../cli/temporal-latency.ts';
import { workerVersionCommand } from '../../cli/worker-versions.ts';
import type { Config } from '../../config/env.ts';
import { dataConverters, serviceCodec } from '../../core/payload-codec.ts';
import { connectTemporal, type TemporalHandle } from '../../core/temporal.ts';
import { type RunningWorker, startWorker } from '../../worker/worker.ts';
import { workflowBundle } from '../harness/servers.ts';
import { type StartedTemporal, startTemporal } from '../harness/temporal.ts';
import { freePort } from '../helpers/service.ts';
import { makeUser, runWorkflow, startWorkflowEnv, type WorkflowEnv, type WorkflowView } from './setup.ts';

let dir: string;
let temporal: StartedTemporal;
let env: WorkflowEnv;
let approver: Awaited<ReturnType<typeof makeUser>>;
let wf: WorkflowView;
const handles: TemporalHandle[] = [];
const workers: Record<string, RunningWorker> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'countersign-versioning-'));
  temporal = await startTemporal({
    dir,
    port: await freePort(),
    uiPort: await freePort(),
    dynamicConfig: {
      ...LATENCY_DYNAMIC_CONFIG,
      'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '1s',
      'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
    },
  });
  env = await startWorkflowEnv({ worker: false, temporal: temporal.server });
  approver = await makeUser(env, 'admin', 'approver@example.test');
}, 120_000);

afterAll(async () => {
  for (const w of Object.values(workers)) await w.shutdown();
  await env?.stop();
  for (const h of handles) await h.connection.close();
  await temporal?.process.stop('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The configuration of release `buildId` (COUNTERSIGN_BUILD_ID), otherwise the service's. */
function release(buildId: string, mode: 'auto' | 'manual' = 'auto'): Config {
  const config = env.svc.deps.config;
  return { ...config, workerVersioning: { ...config.workerVersioning, mode, buildId } };
}

/** The API now runs as release `buildId`: what a rolled `serve` replica is. */
async function serveAs(buildId: string) {
  const handle = await connectTemporal(
    temporal.server.address,
    release(buildId),
    dataConverters(serviceCodec(env.svc.deps)).client,
  );
  handles.push(handle);
  env.svc.deps.temporal = handle;
}

async function startWorkerOf(buildId: string, mode: 'auto' | 'manual') {
  workers[buildId] = await startWorker(
    { ...env.svc.deps, config: release(buildId, mode) },
    temporal.server.address,
    { workflowBundle: workflowBundle(), identity: `worker-${buildId}` },
  );
}

function handle(runId: string): WorkflowHandle {
  return env.svc.deps.temporal!.client.workflow.getHandle(runId);
}

/** Every worker identity and build id that completed a workflow task or started an activity. */
async function executedBy(runId: string): Promise<{ identities: string[]; buildIds: string[] }> {
  const history = await handle(runId).fetchHistory();
  const identities = new Set<string>();
  const buildIds = new Set<string>();
  for (const e of history.events ?? []) {
    const done = e.workflowTaskCompletedEventAttributes;
    if (done) {
      identities.add(done.identity ?? '');
      buildIds.add(done.deploymentVersion?.buildId ?? '(unversioned)');
    }
    const activity = e.activityTaskStartedEventAttributes;
    if (activity) identities.add(activity.identity ?? '');
  }
  return { identities: [...identities].sort(), buildIds: [...buildIds].sort() };
}

/** The build id the run is pinned to (and that it is pinned, not auto-upgrading). */
async function pinnedTo(runId: string): Promise<string | undefined> {
  const info = (await handle(runId).describe()).raw.workflowExecutionInfo?.versioningInfo;
  expect(info?.behavior).toBe(proto.temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
  return info?.deploymentVersion?.buildId ?? undefined;
}

/** The id of the next cron run: fires the workflow's Schedule now, as its cron would. */
async function fireSchedule(): Promise<string> {
  const runs = async () =>
    (
      await env.api<{ data: Array<{ id: string; trigger: string }> }>(
        'GET',
        `/api/v1/workflows/${wf.id}/runs`,
      )
    ).body.data
      .filter((r) => r.trigger === 'cron')
      .map((r) => r.id);
  const before = new Set(await runs());
  await env.svc.deps.temporal!.client.schedule.getHandle(scheduleId(wf.id)).trigger();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const fresh = (await runs()).filter((id) => !before.has(id));
    if (fresh.length > 0) return fresh[0]!;
    if (Date.now() > deadline) throw new Error('the schedule started no run');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function approve(runId: string) {
  await env.waitRun(wf.id, runId, (r) => r.status === 'waiting_for_approval');
  const res = await env.api(
    'POST',
    `/api/v1/workflows/${wf.id}/runs/${runId}/approvals`,
    {
      decision: 'approve',
    },
    approver.bearer,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The version's drainage as Temporal reports it: DRAINED once no open run is pinned to it. */
async function drainage(buildId: string): Promise<string> {
  const res = await env.svc.deps.temporal!.connection.workflowService.describeWorkerDeploymentVersion({
    namespace: temporal.server.namespace,
    deploymentVersion: { deploymentName: release(buildId).workerVersioning.deploymentName, buildId },
  });
  const status = res.workerDeploymentVersionInfo?.drainageInfo?.status ?? 0;
  return proto.temporal.api.enums.v1.VersionDrainageStatus[status] ?? String(status);
}

async function waitDrainage(buildId: string, wanted: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await drainage(buildId);
    if (now === wanted) return;
    if (Date.now() > deadline) throw new Error(`version ${buildId} is ${now}, not ${wanted}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const A_ONLY = { identities: ['worker-A'], buildIds: ['A'] };
const B_ONLY = { identities: ['worker-B'], buildIds: ['B'] };

describe('a rolling upgrade from release A to release B', () => {
  const runs: Record<string, string> = {};

  it('release A: its workers make A current, its API pins its runs to A', async () => {
    await startWorkerOf('A', 'auto');
    expect(await workers.A!.promotion).toMatchObject({ current: true, currentBuildId: 'A' });
    await serveAs('A');
    const created = await env.api<WorkflowView>('POST', '/api/v1/workflows', {
      name: 'Versioned',
      // A cron that never fires by itself in a test (1 January): the test fires the Schedule.
      cron_schedule: '0 0 1 1 *',
      steps: [
        { name: 'sign_off', action: { __type__: 'approval', reviews_required: 1 } },
        {
          name: 'check',
          action: { __type__: 'query', credential_id: env.db.credentialId, query: 'select 1 as one' },
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    wf = created.body;
    runs.a1 = await runWorkflow(env, wf.id);
    await env.waitRun(wf.id, runs.a1, (r) => r.status === 'waiting_for_approval');
    expect(await pinnedTo(runs.a1)).toBe('A');
  });

  it("B's workers beside A's: A stays current, A's API still pins to A, B's API pins to B", async () => {
    await startWorkerOf('B', 'manual');
    expect(await workers.B!.promotion).toMatchObject({ current: false, currentBuildId: 'A' });
    runs.a2 = await runWorkflow(env, wf.id);
    // A Schedule's start names no version: it goes to the current one.
    runs.cronA = await fireSchedule();
    await serveAs('B');
    runs.b1 = await runWorkflow(env, wf.id);
    for (const id of [runs.a2, runs.cronA, runs.b1])
      await env.waitRun(wf.id, id, (r) => r.status === 'waiting_for_approval');
    expect(await pinnedTo(runs.a2)).toBe('A');
    expect(await pinnedTo(runs.cronA)).toBe('A');
    expect(await pinnedTo(runs.b1)).toBe('B');
  });

  it('each run finishes on the workers of the release that started it', async () => {
    for (const id of [runs.a1!, runs.cronA!, runs.b1!]) {
      await approve(id);
      const run = await env.waitRun(wf.id, id);
      expect(run.status, run.error ?? '').toBe('succeeded');
    }
    expect(await executedBy(runs.a1!)).toEqual(A_ONLY);
    expect(await executedBy(runs.cronA!)).toEqual(A_ONLY);
    expect(await executedBy(runs.b1!)).toEqual(B_ONLY);
  });

  it('`countersign worker promote` makes B current: the Schedule now starts runs on B', async () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    await workerVersionCommand(release('B'), temporal.server.address, ['promote'], sink);
    expect(out).toMatch(/ B is the current version \(was A\)/);
    runs.cronB = await fireSchedule();
    await approve(runs.cronB);
    const run = await env.waitRun(wf.id, runs.cronB);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(await pinnedTo(runs.cronB)).toBe('B');
    expect(await executedBy(runs.cronB)).toEqual(B_ONLY);
  });

  it("a worker of release A restarted after the promotion does not take B's place", async () => {
    const restarted = await startWorker(
      { ...env.svc.deps, config: release('A', 'auto') },
      temporal.server.address,
      { workflowBundle: workflowBundle(), identity: 'worker-A-restarted' },
    );
    try {
      const outcome = await restarted.promotion;
      expect(outcome).toMatchObject({ current: false, currentBuildId: 'B' });
      expect(outcome?.reason).toContain('newer');
    } finally {
      await restarted.shutdown();
    }
  });

  it("A drains only when its last run ended; then A's workers stop and B runs everything", async () => {
    // a2, pinned to A, is still waiting for its approval: A is draining, not drained.
    await waitDrainage('A', 'VERSION_DRAINAGE_STATUS_DRAINING');
    await new Promise((r) => setTimeout(r, 3000));
    expect(await drainage('A')).toBe('VERSION_DRAINAGE_STATUS_DRAINING');
    await approve(runs.a2!);
    expect((await env.waitRun(wf.id, runs.a2!)).status).toBe('succeeded');
    expect(await executedBy(runs.a2!)).toEqual(A_ONLY);
    await waitDrainage('A', 'VERSION_DRAINAGE_STATUS_DRAINED');
    await workers.A!.shutdown();
    delete workers.A;
    runs.b2 = await runWorkflow(env, wf.id);
    await approve(runs.b2);
    const run = await env.waitRun(wf.id, runs.b2);
    expect(run.status, run.error ?? '').toBe('succeeded');
    expect(await executedBy(runs.b2)).toEqual(B_ONLY);
  });
});
