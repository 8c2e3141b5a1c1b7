import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { exitCode, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';

// `countersign worker` with WORKER_HTTP_PORT: health, readiness and Prometheus metrics with the
// Temporal SDK's runtime metrics beside Countersign's own, and every log line JSON.
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));
let store: TestStore | undefined;
afterAll(async () => store?.drop());

describe('worker endpoint', () => {
  it('serves /healthz, /readyz and /metrics with the SDK metrics; logs are JSON lines only', async () => {
    store = await createTestStore();
    const t = servers().temporal;
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'worker'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: store.url,
        TEMPORAL_ADDRESS: t.address,
        TEMPORAL_NAMESPACE: t.namespace,
        TEMPORAL_TASK_QUEUE: `endpoint-${port}`,
        COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
        WORKER_HTTP_PORT: String(port),
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      await until('worker readiness', async () =>
        (await fetch(`${url}/readyz`)).status === 200 ? true : undefined,
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const metrics = await until('SDK metrics', async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return /^temporal_\w+/m.test(text) ? text : undefined;
      });
      expect(metrics).toMatch(/^temporal_(num_pollers|worker_task_slots_available|request)/m);
      expect(metrics).toContain('countersign_governed_queries_total');
      child.kill('SIGTERM');
      expect(await exitCode(child)).toBe(0);
      // The SDK core's own lines (debug here) come through the JSON logger, never raw or coloured.
      const lines = out.split('\n').filter(Boolean);
      expect(lines.some((l) => l.includes('"component":"temporal-sdk"'))).toBe(true);
      for (const line of lines) {
        expect(line).not.toContain('\u001b[');
        expect(() => JSON.parse(line), line).not.toThrow();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 180_000);
});
