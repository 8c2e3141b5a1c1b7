import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { startDev } from '../../cli/dev.ts';
import { loadConfig } from '../../config/env.ts';
import { freePorts } from '../harness/process.ts';
import { runOneWorkflow } from '../helpers/processes.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe('npm run dev (embedded PGlite store and local Temporal dev server)', () => {
  it('refuses a port that is taken at once, before it starts a store or Temporal', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cs-dev-taken-'));
    dirs.push(dataDir);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const config = loadConfig({ COUNTERSIGN_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' });
      await expect(startDev(config, capture().stream)).rejects.toThrow(/EADDRINUSE/);
      // Nothing was started and then stopped: no store files, no Temporal database.
      expect(await readdir(dataDir)).toEqual([]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('comes up healthy, authenticates the printed key, and keeps its state across a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cs-dev-'));
    dirs.push(dataDir);
    const [port] = await freePorts(1);
    const config = loadConfig({ COUNTERSIGN_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' });

    // Probed all through the start, as a health check or a browser would: the port is claimed
    // from the first moment, and a connection made before the API listens must not stall it.
    let starting = true;
    let probes = 0;
    const probing = (async () => {
      while (starting) {
        probes++;
        await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const first = capture();
    const dev = await startDev(config, first.stream).finally(() => {
      starting = false;
    });
    await probing;
    expect(probes).toBeGreaterThan(10);
    let apiKey: string;
    try {
      expect(first.text()).toMatch(/first start/);
      expect(first.text()).toMatch(/MCP endpoint: http:\/\/127\.0\.0\.1:\d+\/mcp/);
      expect(first.text()).toMatch(/Temporal UI: +http:\/\/127\.0\.0\.1:\d+/);
      apiKey = /API key: +(\S+)/.exec(first.text())![1]!;
      let workerUp = false;
      void dev.workerReady.then(() => {
        workerUp = true;
      });
      expect((await fetch(`${dev.apiUrl}/healthz`)).status).toBe(200);
      // The API answers while the worker still bundles the workflow code (seconds).
      expect(workerUp).toBe(false);
      const ready = await fetch(`${dev.apiUrl}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok', temporal: 'ok' } });
      expect((await fetch(`${dev.apiUrl}/api/v1/me`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
      expect((await fetch(`${dev.apiUrl}/api/v1/me`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(
        401,
      );
      // A run started before the worker polls waits in Temporal's queue and succeeds once it does.
      const status = runOneWorkflow(dev.apiUrl, apiKey, { name: 'dev check', waitReady: false });
      await dev.workerReady;
      expect(first.text()).toMatch(/Worker ready/);
      expect(await status).toBe('succeeded');
    } finally {
      await dev.stop();
    }

    const second = capture();
    const again = await startDev(config, second.stream);
    try {
      // Same store: no second bootstrap, and the key from the first run still works.
      expect(second.text()).not.toMatch(/first start/);
      const res = await fetch(`${again.apiUrl}/api/v1/me`, { headers: { 'x-api-key': apiKey } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ kind: 'api_key' });
    } finally {
      await again.stop();
    }
  }, 120_000);
});
