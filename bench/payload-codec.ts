// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// What payload encryption costs: the three-step workflow (query, condition, api) with the service's
// encrypting data converter against the same workflow on a worker and client without it, interleaved
// (target: ratio of p50s at most 1.1); and the codec endpoint's decode of a run history holding a
// 100-row query result, for an admin, with its redaction checks and audit entry (target < 5 ms p50).

import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { createWorkflow } from '../automation/definitions.ts';
import { startRun } from '../automation/runs.ts';
import { decodeForReader } from '../automation/temporal-payloads.ts';
import { deploymentVersion } from '../core/build-id.ts';
import { serviceCodec } from '../core/payload-codec.ts';
import { connectTemporal } from '../core/temporal.ts';
import { createUser } from '../identity/manage.ts';
import { principalCaller } from '../identity/principal.ts';
import { pinnedTo, startWorker, TRACING_WORKFLOW_MODULE, WORKFLOWS_PATH } from '../worker/worker.ts';
import { type Bench, type BenchRow, interleaved, percentile, sample } from './report.ts';
import { BENCH_ACTOR, benchOrg, startBenchService } from './support/world.ts';

const SAMPLES = 60;
const WARMUP = 5;
const TARGET_RATIO = 1.1;
const TARGET_DECODE_MS = 5;

const ms = (xs: number[]) =>
  `${percentile(xs, 50).toFixed(2)} ms p50, ${percentile(xs, 95).toFixed(2)} ms p95`;

const bench: Bench = {
  name: 'payload-codec',
  async run(): Promise<BenchRow[]> {
    const service = await startBenchService();
    const { servers, config, deps, receiver, taskQueue } = service;
    const { postgres: pg, temporal: t } = servers;
    const worker = await startWorker(deps, t.address);
    // The same service without encryption: its own task queue, worker and client, no data converter.
    const plainQueue = `${taskQueue}-plain`;
    const plainConfig = { ...config, temporalTaskQueue: plainQueue };
    const plainTemporal = await connectTemporal(t.address, plainConfig);
    const plainDeps = { ...deps, config: plainConfig, temporal: plainTemporal };
    const native = await NativeConnection.connect({ address: t.address });
    // Everything as startWorker sets it but the data converter: the same workflow modules and
    // sink, and the same deployment version (runs are pinned to it, so an unversioned worker
    // would never get them).
    const version = await deploymentVersion(plainConfig);
    const plainWorker = await Worker.create({
      connection: native,
      namespace: t.namespace,
      taskQueue: plainQueue,
      workflowsPath: WORKFLOWS_PATH,
      interceptors: { workflowModules: [TRACING_WORKFLOW_MODULE] },
      sinks: { exporter: { export: { fn() {} } } },
      activities: createActivities(plainDeps),
      ...pinnedTo(version),
    });
    const plainDone = plainWorker.run();
    try {
      const { orgId, credentialId, principal } = await benchOrg(deps, pg);
      const step = (query: string) => ({
        name: 'q',
        condition: null,
        permissions: [],
        action: { __type__: 'query' as const, credential_id: credentialId, query, timeout_seconds: 5 },
      });
      const threeSteps = await createWorkflow(deps, { orgId, actor: BENCH_ACTOR, origin: 'user' }, {
        name: 'bench three steps',
        group: null,
        cron_schedule: null,
        trigger_tracker_label: null,
        inputs: [],
        steps: [
          step('select 1 as one'),
          {
            name: 'gate',
            condition: null,
            permissions: [],
            action: { __type__: 'condition', expression: '${step.q.output.num_rows} > 0', on_false: 'fail' },
          },
          {
            name: 'call',
            condition: null,
            permissions: [],
            action: {
              __type__: 'api',
              endpoint: `${receiver.url}/bench`,
              method: 'GET',
              headers: {},
              body: null,
              expected_status: 200,
              include_service_jwt: false,
              timeout_seconds: 5,
            },
          },
        ],
      } as never);
      const runOn = (d: typeof deps) => async () => {
        const runId = await startRun(d, principalCaller(principal), threeSteps.id, {});
        const state = (await d.temporal!.client.workflow.getHandle(runId).result()) as { status: string };
        if (state.status !== 'succeeded') throw new Error(`bench run ended ${state.status}`);
      };
      const [encrypted, plain] = await interleaved(SAMPLES, [runOn(deps), runOn(plainDeps)], WARMUP);
      const ratio = percentile(encrypted!, 50) / percentile(plain!, 50);

      // A run whose query step returns 100 rows, decoded as the codec endpoint does.
      const hundred = await createWorkflow(deps, { orgId, actor: BENCH_ACTOR, origin: 'user' }, {
        name: 'bench 100 rows',
        group: null,
        cron_schedule: null,
        trigger_tracker_label: null,
        inputs: [],
        steps: [
          step(
            "select g as id, 'name-' || g as name, md5(g::text) as email, g * 1.5 as amount from generate_series(1, 100) g",
          ),
        ],
      } as never);
      const runId = await startRun(deps, principalCaller(principal), hundred.id, {});
      await deps.temporal!.client.workflow.getHandle(runId).result();
      const raw = new Client({ connection: plainTemporal.connection, namespace: t.namespace });
      const history = await raw.workflow.getHandle(runId).fetchHistory();
      const payloads = collectPayloads(history);
      const admin = await createUser(deps.sql, {
        orgId,
        email: 'bench-admin@example.test',
        role: 'admin',
        password: 'bench-password-1234',
      });
      const reader = {
        kind: 'user' as const,
        orgId,
        userId: admin.id,
        email: admin.email,
        role: 'admin' as const,
        via: 'token' as const,
        credentialId: 'pat_bench',
      };
      const codec = serviceCodec(deps);
      const decodeTimes = await sample(SAMPLES * 3, () => decodeForReader(deps, codec, reader, payloads), 10);
      return [
        {
          figure: 'workflow run, 3 steps, encrypted payloads',
          value: ms(encrypted!),
          baseline: `same without the codec ${ms(plain!)}`,
          comparison: `ratio ${ratio.toFixed(2)}; ${ratio <= TARGET_RATIO ? 'meets' : 'MISSES'} target ≤ ${TARGET_RATIO}×`,
        },
        {
          figure: `codec decode for an admin: run history with a 100-row result (${payloads.length} payloads)`,
          value: ms(decodeTimes),
          baseline: '',
          comparison: `${percentile(decodeTimes, 50) < TARGET_DECODE_MS ? 'meets' : 'MISSES'} target < ${TARGET_DECODE_MS} ms p50`,
        },
      ];
    } finally {
      plainWorker.shutdown();
      await plainDone;
      await native.close();
      await worker.shutdown();
      await plainTemporal.connection.close();
      await service.stop();
    }
  },
};

/** The payloads of a history, as the Temporal UI sends them to the codec endpoint. */
function collectPayloads(
  node: unknown,
  out: Array<{ metadata: Record<string, Uint8Array>; data: Uint8Array }> = [],
) {
  if (typeof node !== 'object' || node === null || node instanceof Uint8Array) return out;
  if (Array.isArray(node)) {
    for (const n of node) collectPayloads(n, out);
    return out;
  }
  const r = node as Record<string, unknown>;
  const m = r.metadata as Record<string, Uint8Array> | undefined;
  if (m?.encoding instanceof Uint8Array && r.data instanceof Uint8Array) {
    out.push({ metadata: m, data: r.data });
    return out;
  }
  for (const value of Object.values(r)) collectPayloads(value, out);
  return out;
}

export default bench;
