import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { exitCode, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

// `serve` whose store goes away: callers get 503 with Retry-After and problem JSON at once (no
// 500, no wait for the access cache's barrier), and service resumes when the store is back.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

let store: TestStore;
let proxy: TcpProxy;
let api: ChildProcess;
let url: string;
const apiKey = mintSecret('cskey', newId('key')).secret;
const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
let log = '';

beforeAll(async () => {
  store = await createTestStore();
  const pg = servers().postgres;
  proxy = await startTcpProxy(pg.host, pg.port);
  const storeUrl = new URL(store.url);
  storeUrl.port = String(proxy.port);
  storeUrl.hostname = '127.0.0.1';
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const t = servers().temporal;
  api = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: storeUrl.toString(),
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      COUNTERSIGN_API_KEY: apiKey,
      COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
      COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
      PORT: String(port),
      SHUTDOWN_DELAY_SECONDS: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout!.on('data', (d: Buffer) => {
    log += d.toString();
  });
  api.stderr!.resume();
  await until('readiness', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined));
}, 120_000);

afterAll(async () => {
  if (api && api.exitCode === null) api.kill('SIGKILL');
  await proxy?.close();
  await store?.drop();
});

describe('store outage', () => {
  it('answers 503 with Retry-After and problem JSON, writes without the access barrier wait, and recovers', async () => {
    expect((await fetch(`${url}/api/v1/desk/databases`, { headers })).status).toBe(200);
    await proxy.cut();

    for (const [method, path, body] of [
      ['GET', '/api/v1/desk/databases', undefined],
      // A write: it must not also wait out the access barrier (2 s) through the dead store.
      ['POST', '/api/v1/workflows', JSON.stringify({ name: 'x', steps: [] })],
    ] as const) {
      const started = performance.now();
      const res = await fetch(`${url}${path}`, { method, headers, body });
      const took = performance.now() - started;
      const text = await res.text();
      expect(res.status, `${method} ${path}: ${text}`).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      const problem = JSON.parse(text) as { type: string; status: number; detail: string };
      expect(problem.status).toBe(503);
      expect(problem.type).toMatch(/\/problems\/store-unavailable$/);
      // Neither the store's address nor its port is told to the caller.
      expect(text).not.toContain(String(proxy.port));
      // The driver's queue may hold the first failing request until its next connect attempt;
      // the write that follows answers at once (the barrier would hold it 2 s more).
      if (method === 'POST') expect(took, `${method} ${path} took ${took} ms`).toBeLessThan(1500);
    }
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    // Logged as an outage, not as an unhandled error with a stack.
    expect(log).toContain('store unavailable');
    expect(log).not.toContain('unhandled error');

    await proxy.restore();
    await until('the store back', async () =>
      (await fetch(`${url}/api/v1/desk/databases`, { headers })).status === 200 ? true : undefined,
    );
    api.kill('SIGTERM');
    expect(await exitCode(api)).toBe(0);
  }, 120_000);
});
