// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// End-to-end time of a three-step workflow run (query, condition, api) through the interpreter,
// against the tuned bare Temporal floor: a bare workflow with three empty activities, started
// eagerly on the worker's own connection, on the same Temporal dev server started with the
// dynamic config the service relies on (cli/temporal-latency.ts), interleaved in the same run
// (DESIGN.md Conventions). Targets: ratio of p50s at most 1.3, and at most 100 ms p50.
// A last row runs the bare workflow on a server without that config: what it is for.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createWorkflow } from '../automation/definitions.ts';
import { startRun } from '../automation/runs.ts';
import { principalCaller } from '../identity/principal.ts';
import { newId } from '../store/ids.ts';
import { freePorts } from '../test/harness/process.ts';
import { startTemporal } from '../test/harness/temporal.ts';
import { startWorker } from '../worker/worker.ts';
import { type Bench, type BenchRow, interleaved, percentile } from './report.ts';
import { BENCH_ACTOR, benchOrg, startBenchService } from './support/world.ts';

const SAMPLES = 60;
const WARMUP = 10;
const UNTUNED_SAMPLES = 15;
const TARGET_RATIO = 1.3;
const TARGET_P50_MS = 100;
const BARE_PATH = fileURLToPath(new URL('../test/workflows/bare-workflow.ts', import.meta.url));

/** A worker for the bare workflow, and a client on its connection so starts can be eager. */
async function bareFloor(address: string, namespace: string, taskQueue: string) {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: BARE_PATH,
    activities: { a: async () => {}, b: async () => {}, c: async () => {} },
  });
  const done = worker.run();
  const client = new Client({ connection, namespace });
  return {
    run: () =>
      client.workflow.execute('bareThreeActivities', {
        taskQueue,
        workflowId: `bare-${newId('run')}`,
        requestEagerStart: true,
      }),
    async stop() {
      worker.shutdown();
      await done;
      await connection.close();
    },
  };
}

const ms = (xs: number[]) =>
  `${percentile(xs, 50).toFixed(1)} ms p50, ${percentile(xs, 95).toFixed(1)} ms p95`;

const bench: Bench = {
  name: 'workflows',
  async run(): Promise<BenchRow[]> {
    const service = await startBenchService();
    const { servers, deps, receiver, taskQueue } = service;
    const { postgres: pg, temporal: t } = servers;
    const worker = await startWorker(deps, t.address);
    const bare = await bareFloor(t.address, t.namespace, `${taskQueue}-bare`);
    try {
      const { orgId, credentialId, principal } = await benchOrg(deps, pg);
      // timeout_seconds 5: short steps, which run as local activities (workflows/README.md);
      // null: the default timeouts (30 s), regular activities.
      const threeSteps = (timeout: number | null): Parameters<typeof createWorkflow>[2] => ({
        name: `bench three steps (${timeout ?? 'default'} s)`,
        group: null,
        cron_schedule: null,
        trigger_tracker_label: null,
        inputs: [],
        steps: [
          {
            name: 'q',
            condition: null,
            permissions: [],
            action: {
              __type__: 'query',
              credential_id: credentialId,
              query: 'select 1 as one',
              timeout_seconds: timeout,
            },
          },
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
              timeout_seconds: timeout,
            },
          },
        ],
      });
      const short = await createWorkflow(deps, { orgId, actor: BENCH_ACTOR, origin: 'user' }, threeSteps(5));
      const long = await createWorkflow(
        deps,
        { orgId, actor: BENCH_ACTOR, origin: 'user' },
        threeSteps(null),
      );
      const client = deps.temporal!.client;
      const ours = (wfId: string) => async () => {
        const runId = await startRun(deps, principalCaller(principal), wfId, {});
        const state = (await client.workflow.getHandle(runId).result()) as { status: string };
        if (state.status !== 'succeeded') throw new Error(`bench run ended ${state.status}`);
      };
      const [local, regular, floor] = await interleaved(
        SAMPLES,
        [ours(short.id), ours(long.id), bare.run],
        WARMUP,
      );
      const untuned = await untunedBare();
      const versus = (xs: number[]) => {
        const ratio = percentile(xs, 50) / percentile(floor!, 50);
        const p50 = percentile(xs, 50);
        const verdict = ratio <= TARGET_RATIO && p50 <= TARGET_P50_MS ? 'meets' : 'MISSES';
        return `ratio ${ratio.toFixed(2)}; ${verdict} targets ≤ ${TARGET_RATIO}× and ≤ ${TARGET_P50_MS} ms p50`;
      };
      const floorText = `tuned bare Temporal floor (3 empty activities, eager start) ${ms(floor!)}`;
      return [
        {
          figure: 'workflow run, 3 steps (query, condition, api), 5 s step timeouts (local activities)',
          value: ms(local!),
          baseline: floorText,
          comparison: versus(local!),
        },
        {
          figure: 'workflow run, 3 steps (query, condition, api), default timeouts (regular activities)',
          value: ms(regular!),
          baseline: floorText,
          comparison: versus(regular!),
        },
        {
          figure: 'bare workflow, 3 empty activities, dev server without the latency config',
          value: ms(untuned),
          baseline: floorText,
          comparison: `ratio ${(percentile(untuned, 50) / percentile(floor!, 50)).toFixed(2)}`,
        },
      ];
    } finally {
      await bare.stop();
      await worker.shutdown();
      await service.stop();
    }
  },
};

/** The bare floor on a dev server as `temporal server start-dev` comes: no dynamic config. */
async function untunedBare(): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'countersign-bench-untuned-'));
  const [port, uiPort] = await freePorts(2);
  const server = await startTemporal({ dir, port: port!, uiPort: uiPort!, dynamicConfig: {} });
  try {
    const bare = await bareFloor(server.server.address, server.server.namespace, 'bench-untuned');
    try {
      const [times] = await interleaved(UNTUNED_SAMPLES, [bare.run], 3);
      return times!;
    } finally {
      await bare.stop();
    }
  } finally {
    await server.process.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

export default bench;
