// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
// End-to-end time of a three-step workflow run (query, condition, api) through the interpreter,
// against a bare Temporal workflow with three empty activities, interleaved in the same run on the
// same Temporal dev server (DESIGN.md Conventions). Target: ratio of p50s under 1.3.
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as v from 'valibot';
import { createWorkflow } from '../automation/definitions.ts';
import { startRun } from '../automation/runs.ts';
import { buildDeps } from '../cli/boot.ts';
import { loadConfig } from '../config/env.ts';
import { CreateDatabase } from '../registry/database-input.ts';
import { createDatabase } from '../registry/databases.ts';
import { generateKey } from '../store/crypto.ts';
import { newId } from '../store/ids.ts';
import { insertOrganization } from '../store/users.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { startReceiver } from '../test/peers/receiver.ts';
import { startWorker } from '../worker/worker.ts';
import { type Bench, type BenchRow, percentile } from './report.ts';

const SAMPLES = 60;
const WARMUP = 10;
const TARGET_RATIO = 1.3;
const BARE_PATH = fileURLToPath(new URL('../test/workflows/bare-workflow.ts', import.meta.url));

const bench: Bench = {
  name: 'workflows',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const { postgres: pg, temporal: t } = started.servers;
    const store = await createTestStore(pg);
    const receiver = await startReceiver();
    const taskQueue = `bench-${newId('run').slice(-10).toLowerCase()}`;
    const config = loadConfig({
      DATABASE_URL: store.url,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      TEMPORAL_NAMESPACE: t.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      LOG_LEVEL: 'silent',
    });
    // The same deps as `countersign serve --with-worker` builds.
    const deps = await buildDeps(config, {
      storeUrl: store.url,
      storeMax: 10,
      temporalAddress: t.address,
      dev: false,
    });
    const sql = deps.sql;
    const worker = await startWorker(deps, t.address);
    const bareConnection = await NativeConnection.connect({ address: t.address });
    const bareQueue = `${taskQueue}-bare`;
    const bareWorker = await Worker.create({
      connection: bareConnection,
      namespace: t.namespace,
      taskQueue: bareQueue,
      workflowsPath: BARE_PATH,
      activities: { a: async () => {}, b: async () => {}, c: async () => {} },
    });
    const bareDone = bareWorker.run();
    try {
      const org = await insertOrganization(sql, { id: newId('org'), name: 'bench' });
      const { credentials } = await createDatabase(
        deps,
        org.id,
        v.parse(CreateDatabase, {
          name: 'bench',
          adapter: 'postgres',
          hostname: pg.host,
          port: pg.port,
          database: pg.database,
          credentials: [
            { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
          ],
        }),
      );
      const wf = await createWorkflow(deps, org.id, {
        name: 'bench three steps',
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
              credential_id: credentials[0]!.id,
              query: 'select 1 as one',
              timeout_seconds: null,
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
              timeout_seconds: null,
            },
          },
        ],
      });
      const principal = { kind: 'api_key' as const, orgId: org.id, apiKeyId: 'key_bench' };
      const client = deps.temporal!.client;
      const ours = async () => {
        const runId = await startRun(deps, principal, wf.id, {});
        await client.workflow.getHandle(runId).result();
      };
      const bare = () =>
        client.workflow.execute('bareThreeActivities', {
          taskQueue: bareQueue,
          workflowId: `bare-${newId('run')}`,
        });
      for (let i = 0; i < WARMUP; i++) {
        await ours();
        await bare();
      }
      const times: [number[], number[]] = [[], []];
      const fns = [ours, bare];
      for (let i = 0; i < SAMPLES; i++) {
        // Alternate who goes first so drift in the dev server hits both alike.
        for (let k = 0; k < 2; k++) {
          const j = (i + k) % 2;
          const t0 = performance.now();
          await fns[j]!();
          times[j]!.push(performance.now() - t0);
        }
      }
      const [o, b] = times;
      const ratio = percentile(o, 50) / percentile(b, 50);
      const ms = (xs: number[]) =>
        `${percentile(xs, 50).toFixed(1)} ms p50, ${percentile(xs, 95).toFixed(1)} ms p95`;
      return [
        {
          figure: 'workflow run, 3 steps (query, condition, api), end to end',
          value: ms(o),
          baseline: `bare workflow, 3 empty activities ${ms(b)}`,
          comparison: `ratio ${ratio.toFixed(2)} (target < ${TARGET_RATIO})`,
        },
      ];
    } finally {
      bareWorker.shutdown();
      await bareDone;
      await bareConnection.close();
      await worker.shutdown();
      await deps.temporal?.connection.close();
      await deps.pools.closeAll();
      await sql.end({ timeout: 5 });
      await receiver.close();
      await store.drop();
      await started.stop();
    }
  },
};

export default bench;
