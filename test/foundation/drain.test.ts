import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { type Balancer, startBalancer } from '../helpers/balancer.ts';
import { exitCode, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';

// The production shape: two `serve` replicas behind a TCP load balancer that follows their
// readiness. Stopping one (SIGTERM) or restarting both in turn must fail no request, including
// governed queries that take 3 s and requests sent just after the signal.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
const DELAY_SECONDS = 5;

let store: TestStore;
let lb: Balancer;
let ports: number[];
const replicas = new Map<number, ChildProcess>();
let apiKey: string;
let databaseId: string;
let env: NodeJS.ProcessEnv;

function startReplica(port: number): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.resume();
  child.stderr?.resume();
  replicas.set(port, child);
  return child;
}

async function readyBehindBalancer(port: number) {
  await until(`replica ${port} in rotation`, async () =>
    lb.backends.find((b) => b.port === port)?.ready ? true : undefined,
  );
}

beforeAll(async () => {
  store = await createTestStore();
  ports = [await freePort(), await freePort()];
  lb = await startBalancer(ports);
  apiKey = mintSecret('cskey', newId('key')).secret;
  const t = servers().temporal;
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: store.url,
    TEMPORAL_ADDRESS: t.address,
    TEMPORAL_NAMESPACE: t.namespace,
    COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
    COUNTERSIGN_API_KEY: apiKey,
    COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
    COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
    BASE_URL: lb.url,
    COUNTERSIGN_OUTBOUND_ALLOW: '127.0.0.1',
    SHUTDOWN_DELAY_SECONDS: String(DELAY_SECONDS),
    LOG_LEVEL: 'warn',
  };
  // One after the other: the first creates the organization, the second finds it.
  startReplica(ports[0]!);
  await readyBehindBalancer(ports[0]!);
  startReplica(ports[1]!);
  await readyBehindBalancer(ports[1]!);
  const pg = servers().postgres;
  const res = await fetch(`${lb.url}/api/v1/desk/databases`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'orders',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  databaseId = ((await res.json()) as { id: string }).id;
}, 180_000);

afterAll(async () => {
  for (const c of replicas.values()) if (c.exitCode === null) c.kill('SIGKILL');
  await lb?.close();
  await store?.drop();
});

interface Load {
  stop(): Promise<{ ok: number; slow: number; failures: string[] }>;
}

/**
 * 50 clients sending requests back to back through the balancer (keep-alive, as fetch does):
 * ten run a governed 3 s query each time, the others list databases or run a quick query.
 */
function load(): Load {
  let running = true;
  let ok = 0;
  let slow = 0;
  const failures: string[] = [];
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const query = (statement: string) =>
    fetch(`${lb.url}/api/v1/desk/query-requests`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ database_id: databaseId, statement, params: [] }),
    });
  const one = async (i: number, n: number) => {
    const kind = i < 10 ? 'slow' : (i + n) % 2 === 0 ? 'list' : 'quick';
    try {
      const res =
        kind === 'slow'
          ? await query('select pg_sleep(3), 1 as done')
          : kind === 'quick'
            ? await query('select 2 as n')
            : await fetch(`${lb.url}/api/v1/desk/databases`, { headers });
      const text = await res.text();
      if (!res.ok) failures.push(`${kind}: ${res.status} ${text.slice(0, 200)}`);
      else if (kind !== 'list' && !text.includes('"rows"'))
        failures.push(`${kind}: no rows in ${text.slice(0, 200)}`);
      else {
        ok++;
        if (kind === 'slow') slow++;
      }
    } catch (err) {
      failures.push(`${kind}: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`);
    }
  };
  const clients = Array.from({ length: 50 }, async (_, i) => {
    for (let n = 0; running; n++) await one(i, n);
  });
  return {
    async stop() {
      running = false;
      await Promise.all(clients);
      return { ok, slow, failures };
    },
  };
}

async function drainOne(port: number) {
  const child = replicas.get(port)!;
  const signalled = Date.now();
  child.kill('SIGTERM');
  expect(await exitCode(child)).toBe(0);
  const b = lb.backends.find((x) => x.port === port)!;
  // Readiness failed right away, and the listener kept accepting for the configured delay. The
  // balancer sees the closed listener at its next probe, which may come after the exit.
  expect(b.notReadyAt, 'readiness never turned 503').not.toBeNull();
  await until('the balancer to find the listener closed', async () => b.refusedAt ?? undefined, 5_000).catch(
    () => null,
  );
  expect(b.refusedAt, 'the listener never closed').not.toBeNull();
  expect(b.notReadyAt! - signalled).toBeLessThan(3000);
  expect(b.refusedAt! - b.notReadyAt!).toBeGreaterThan(DELAY_SECONDS * 1000 - 3000);
}

describe('graceful drain behind a load balancer', () => {
  it('SIGTERM to one replica during 50 concurrent requests fails none of them', async () => {
    const running = load();
    await new Promise((r) => setTimeout(r, 1000));
    await drainOne(ports[0]!);
    // Requests sent after the replica left keep succeeding on the other one.
    await new Promise((r) => setTimeout(r, 1000));
    const { ok, slow, failures } = await running.stop();
    expect(failures).toEqual([]);
    expect(slow).toBeGreaterThanOrEqual(10);
    expect(ok).toBeGreaterThan(100);
    // Back to two replicas for the next test.
    lb.reset(ports[0]!);
    startReplica(ports[0]!);
    await readyBehindBalancer(ports[0]!);
  }, 180_000);

  it('a rolling restart of both replicas fails no request', async () => {
    const running = load();
    await new Promise((r) => setTimeout(r, 1000));
    for (const port of ports) {
      await drainOne(port);
      lb.reset(port);
      startReplica(port);
      await readyBehindBalancer(port);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const { ok, slow, failures } = await running.stop();
    expect(failures).toEqual([]);
    expect(slow).toBeGreaterThanOrEqual(20);
    expect(ok).toBeGreaterThan(200);
  }, 240_000);
});
