// biome-ignore-all lint/suspicious/noTemplateCurlyInString: step expressions are expression-language source.
// The production shape (compiled `serve` and `worker` as processes, PostgreSQL store, Temporal):
// `serve` SIGKILLed during a burst of starts leaves run rows whose execution was never started;
// once a `serve` runs again, every row settles — succeeded, or failed with a reason — within a
// minute, and none stays `running`.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection, WorkflowClient, WorkflowNotFoundError } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The burst: 50 runs at once, which this 2-core machine handles with serve and worker beside it. */
const BURST = 50;
const children: ChildProcess[] = [];
let store: TestStore | undefined;
let outdir: string | undefined;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await store?.drop();
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

function start(entry: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.resume();
  child.stderr?.resume();
  children.push(child);
  return child;
}

interface Row {
  id: string;
  status: string;
  error: string | null;
}

it('serve SIGKILLed during a burst of starts: every run row settles within a minute', async () => {
  outdir = join(ROOT, 'test-output', `build-${randomBytes(4).toString('hex')}`);
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/build.js'), '--outdir', outdir, '--quiet'], {
    cwd: ROOT,
  });
  const entry = join(outdir, 'countersign.js');
  store = await createTestStore();
  const t = servers().temporal;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const apiKey = mintSecret('cskey', newId('key')).secret;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: store.url,
    TEMPORAL_ADDRESS: t.address,
    TEMPORAL_NAMESPACE: t.namespace,
    TEMPORAL_TASK_QUEUE: `crash-${port}`,
    COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
    COUNTERSIGN_API_KEY: apiKey,
    COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
    COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
    PORT: String(port),
    LOG_LEVEL: 'warn',
  };
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const sql = postgres(store.url, { max: 2, onnotice: () => {} });
  const connection = await Connection.connect({ address: t.address });
  const temporal = new WorkflowClient({ connection, namespace: t.namespace });
  try {
    let serve = start(entry, ['serve'], env);
    start(entry, ['worker'], env);
    await until('readiness', async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined));
    const created = await fetch(`${url}/api/v1/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'burst',
        inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
        steps: [
          { name: 'gate', action: { __type__: 'condition', expression: '${n} > 2', on_false: 'fail' } },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const wf = (await created.json()) as { id: string };

    // Bursts until one is cut between writing a row and starting its execution (the first
    // almost always is); each burst ends with a SIGKILL and a new serve.
    let orphans = 0;
    for (let burst = 0; burst < 3 && orphans === 0; burst++) {
      const before = Number((await sql`select count(*)::int as n from workflow_runs`)[0]!.n);
      const requests = Array.from({ length: BURST }, () =>
        fetch(`${url}/api/v1/workflows/${wf.id}/run`, { method: 'POST', headers, body: '{"n": 5}' }).catch(
          () => null,
        ),
      );
      await until(
        'the first rows of the burst',
        async () => {
          const [row] = await sql<{ n: number }[]>`select count(*)::int as n from workflow_runs`;
          return row!.n >= before + 3 ? true : undefined;
        },
        30_000,
      );
      serve.kill('SIGKILL');
      await Promise.all(requests);
      for (const r of await sql<
        Row[]
      >`select id, status, error from workflow_runs where finished_at is null`) {
        try {
          await temporal.getHandle(r.id).describe();
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) orphans++;
          else throw err;
        }
      }
      serve = start(entry, ['serve'], env);
      await until('readiness', async () =>
        (await fetch(`${url}/readyz`)).status === 200 ? true : undefined,
      );
    }
    // The case under test happened: rows with no execution were left behind.
    expect(orphans).toBeGreaterThan(0);

    const started = Date.now();
    const rows = await until(
      'every run to settle',
      async () => {
        const all = await sql<Row[]>`select id, status, error from workflow_runs`;
        return all.every((r) => r.status !== 'running') ? all : undefined;
      },
      60_000,
    );
    expect(Date.now() - started).toBeLessThan(60_000);
    for (const r of rows) {
      if (r.status === 'failed') expect(r.error, r.id).toBeTruthy();
      else expect(r.status, r.id).toBe('succeeded');
    }
  } finally {
    await sql.end({ timeout: 5 });
    await connection.close();
  }
}, 300_000);
