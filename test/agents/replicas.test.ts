// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are expression-language source.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { type Balancer, startBalancer } from '../helpers/balancer.ts';
import { until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';
import { type AgentProcess, startAgentProcess } from './agent-process.ts';

// agent/README.md "Replicas", in the production shape: three `serve` replicas behind a TCP load
// balancer, a separate worker, and an agent that connects through the balancer and so lands on
// any one replica. No process is told its own address (COUNTERSIGN_INTERNAL_URL is unset): each
// replica advertises the address it listens on, two of them bound to their own loopback address
// and the third to every interface with POD_IP, as the Helm chart runs it. A replica that hangs
// (SIGSTOP: its TCP connections stay open, nothing answers) is routed around within 10 s.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

interface Replica {
  port: number;
  /** The address it is reached at, and should advertise. */
  url: string;
  env: Record<string, string>;
  child?: ChildProcess;
}

let store: TestStore;
let sql: postgres.Sql;
let lb: Balancer;
let replicas: Replica[];
let worker: ChildProcess;
let agent: AgentProcess;
let env: NodeJS.ProcessEnv;
let apiKey: string;
let agentId: string;
let db: { id: string; credentialId: string };
const stopped = new Set<ChildProcess>();
const workerErr: string[] = [];

function start(r: Replica): void {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, ...r.env, PORT: String(r.port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.resume();
  r.child = child;
}

const headers = () => ({ 'x-api-key': apiKey, 'content-type': 'application/json' });

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${lb.url}${path}`, {
    method,
    headers: headers(),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** A governed query sent to one replica directly (not through the balancer). */
async function query(r: Replica, statement: string) {
  const res = await fetch(`${r.url}/api/v1/desk/query-requests`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ database_id: db.id, statement, params: [] }),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as { result?: { rows: unknown[][] }; detail?: string },
  };
}

async function agentRow() {
  const [row] = await sql<Array<{ relay_url: string | null; session_id: string | null }>>`
    select relay_url, session_id from agents where id = ${agentId}`;
  return row!;
}

/** The replica holding the agent's tunnel, per the store (once it names one of them). */
async function holder(except?: Replica): Promise<Replica> {
  return until('the agent to be held by a replica', async () => {
    const row = await agentRow();
    const r = replicas.find((x) => x.url === row.relay_url);
    return r && r !== except ? r : undefined;
  });
}

function pause(child: ChildProcess) {
  child.kill('SIGSTOP');
  stopped.add(child);
}

function resume(child: ChildProcess) {
  child.kill('SIGCONT');
  stopped.delete(child);
}

beforeAll(async () => {
  store = await createTestStore();
  sql = postgres(store.url, { max: 1, onnotice: () => {} });
  replicas = [
    { port: await freePort(), url: '', env: { HOST: '127.0.0.2' } },
    { port: await freePort(), url: '', env: { HOST: '127.0.0.3' } },
    // Bound to every interface, told its pod address by the downward API.
    { port: await freePort(), url: '', env: { HOST: '0.0.0.0', POD_IP: '127.0.0.4' } },
  ];
  for (const [i, r] of replicas.entries()) r.url = `http://127.0.0.${i + 2}:${r.port}`;
  // A probe unanswered for 1 s fails, as with Kubernetes' default timeoutSeconds: a hung replica
  // leaves the rotation after three probes (~4 s).
  lb = await startBalancer(
    replicas.map((r, i) => ({ host: `127.0.0.${i + 2}`, port: r.port })),
    200,
    1_000,
  );
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
    LOG_LEVEL: 'warn',
  };
  // One after the other: the first creates the organization, the others find it.
  for (const r of replicas) {
    start(r);
    await until(`replica ${r.url} in rotation`, async () =>
      lb.backends.find((b) => b.port === r.port)?.ready ? true : undefined,
    );
  }
  worker = spawn(process.execPath, [BIN, 'worker'], {
    env: { ...env, HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  worker.stderr!.on('data', (c: Buffer) => workerErr.push(c.toString('utf8')));

  const registered = await api<{ id: string; token: string }>('POST', '/api/v1/agents', { name: 'edge-lb' });
  expect(registered.status).toBe(201);
  agentId = registered.body.id;
  agent = startAgentProcess(lb.url, registered.body.token);
  await agent.waitFor('connected');
  const pg = servers().postgres;
  const created = await api<{ id: string; credentials: Array<{ id: string }> }>(
    'POST',
    '/api/v1/desk/databases',
    {
      name: 'orders-behind-lb',
      adapter: 'postgres',
      hostname: pg.tls.rightHostname,
      port: pg.port,
      database: pg.database,
      ssl: true,
      ssl_ca_cert: Buffer.from(pg.tls.caCert).toString('base64'),
      verify_server_hostname: true,
      agent_id: agentId,
      credentials: [
        { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
      ],
    },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  db = { id: created.body.id, credentialId: created.body.credentials[0]!.id };
}, 180_000);

afterAll(async () => {
  for (const c of stopped) c.kill('SIGCONT');
  await agent?.stop('SIGKILL');
  for (const c of [worker, ...(replicas ?? []).map((r) => r.child)])
    if (c && c.exitCode === null) c.kill('SIGKILL');
  await lb?.close();
  await sql?.end();
  await store?.drop();
});

describe('agent relays across replicas behind a load balancer, with no per-replica setting', () => {
  it('the holder advertises its own address, and every replica and the worker reach the database', async () => {
    const held = await holder();
    const row = await agentRow();
    expect(row.relay_url).toBe(held.url);
    expect(row.relay_url).not.toBe(lb.url);
    for (const r of replicas) {
      const q = await query(r, 'select 41 + 1 as n, ssl from pg_stat_ssl where pid = pg_backend_pid()');
      expect(q.status, `${r.url}: ${JSON.stringify(q.body)}`).toBe(200);
      expect(q.body.result!.rows).toEqual([[42, true]]);
    }

    const wf = await api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'Lookup behind the balancer',
      inputs: [{ key: 'n', description: 'a number', type: 'integer' }],
      steps: [
        {
          name: 'lookup',
          action: {
            __type__: 'query',
            credential_id: db.credentialId,
            query: 'select ${n}::int * 2 as doubled, ssl from pg_stat_ssl where pid = pg_backend_pid()',
            timeout_seconds: 10,
          },
        },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const ran = await fetch(`${lb.url}/api/v1/workflows/${wf.body.id}/run`, {
      method: 'POST',
      headers: headers(),
      body: '{"n": 21}',
    });
    expect(ran.status, await ran.clone().text()).toBe(200);
    const runId = /run_[0-9A-Z]{26}/.exec(await ran.text())![0];
    const run = await until(
      'the run to finish',
      async () => {
        const r = await api<{ status: string; steps?: Array<{ name: string; output: unknown }> }>(
          'GET',
          `/api/v1/workflows/${wf.body.id}/runs/${runId}`,
        );
        return r.body.status === 'running' || r.body.status === 'pending' ? undefined : r.body;
      },
      120_000,
    );
    expect(run.status, `${JSON.stringify(run)} ${workerErr.join('')}`).toBe('succeeded');
    expect(run.steps!.find((s) => s.name === 'lookup')!.output).toMatchObject({ rows: [[42, true]] });
  }, 180_000);

  it('while the holder hangs, relays fail naming it and why, then the lapsed lease says not connected', async () => {
    const held = await holder();
    const other = replicas.find((r) => r !== held)!;
    // The agent hangs too, so it cannot move: what the other replicas say is all there is to see.
    pause(agent.child);
    pause(held.child!);
    const since = Date.now();
    const details: string[] = [];
    try {
      for (;;) {
        const q = await query(other, 'select 1');
        expect(q.status, JSON.stringify(q.body)).toBe(422);
        expect(q.type).toContain('application/problem+json');
        details.push(q.body.detail!);
        if (q.body.detail!.includes('is not connected') || Date.now() - since > 30_000) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(details.at(-1)).toContain(`agent "edge-lb" (${agentId}) is not connected`);
      // The lease (10 s) lapsed, seen by a query sent at most a few seconds later.
      expect(Date.now() - since).toBeLessThan(20_000);
      const named = details.filter((d) =>
        d.includes(`agent "edge-lb" (${agentId}) is held by the Countersign replica at ${held.url}, which `),
      );
      expect(named.length, details.join('\n')).toBeGreaterThan(0);
      for (const d of named) expect(d).toMatch(/stopped answering|did not answer within 2 s/);
      expect(details.join('\n')).not.toContain(env.COUNTERSIGN_ENCRYPTION_KEY!);
    } finally {
      resume(held.child!);
      resume(agent.child);
    }
    // Both back: the holder renews its lease and relays work again.
    await until(
      'relays through the resumed holder',
      async () => ((await query(other, 'select 1')).status === 200 ? true : undefined),
      30_000,
    );
  }, 90_000);

  it('a SIGSTOPped holder is routed around within 10 s: the agent moves and the other replicas follow', async () => {
    const held = await holder();
    const others = replicas.filter((r) => r !== held);
    // Each of the others relays through the holder, as in steady operation, before the clock
    // starts (the previous test's resumed holder may still be renewing its lease with them).
    for (const r of others)
      await until(
        `${r.url} relaying through the holder`,
        async () => ((await query(r, 'select 1')).status === 200 ? true : undefined),
        30_000,
      );
    const since = Date.now();
    pause(held.child!);
    try {
      const firstSuccess = await Promise.all(
        others.map(async (r) => {
          for (;;) {
            const q = await query(r, 'select 2 as n');
            if (q.status === 200) {
              expect(q.body.result!.rows).toEqual([[2]]);
              return Date.now() - since;
            }
            if (Date.now() - since > 30_000) throw new Error(`${r.url} never recovered: ${q.body.detail}`);
            await new Promise((res) => setTimeout(res, 100));
          }
        }),
      );
      console.info(
        `SIGSTOP of the holder → first success through each other replica: ${firstSuccess.join(', ')} ms`,
      );
      for (const ms of firstSuccess) expect(ms).toBeLessThanOrEqual(10_000);
      const moved = await holder(held);
      expect(others).toContain(moved);
    } finally {
      resume(held.child!);
    }
    // The resumed replica finds the tunnel gone and relays to the new holder like the rest.
    await until(
      'the resumed replica relaying to the new holder',
      async () => ((await query(held, 'select 3 as n')).status === 200 ? true : undefined),
      30_000,
    );
  }, 90_000);
});
