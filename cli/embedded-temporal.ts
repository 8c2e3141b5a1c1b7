import { type ChildProcess, spawn } from 'node:child_process';
import { access, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { dynamicConfigArgs } from './temporal-latency.ts';

/** Search attributes the service registers, so runs can be listed by definition and organization. */
export const SEARCH_ATTRIBUTES = ['CountersignWorkflowId', 'CountersignOrgId'] as const;

export interface EmbeddedTemporal {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

/** The `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then the cache test/setup-deps.sh builds into. */
export async function findTemporalCli(explicit: string | null): Promise<string | null> {
  const candidates = [
    ...(explicit ? [explicit] : []),
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'temporal')),
    join(homedir(), '.cache', 'countersign', 'bin', 'temporal'),
  ];
  for (const candidate of candidates) {
    try {
      await access(candidate);
      return resolve(candidate);
    } catch {}
  }
  return null;
}

/**
 * Starts `temporal server start-dev` with its UI, keeping its SQLite file in the data folder
 * so workflow history survives a restart. Prefers the usual ports (7233, UI 8233) and falls
 * back to free ones when they are taken.
 */
export async function startEmbeddedTemporal(
  cli: string,
  dataDir: string,
  options: { codecEndpoint?: string } = {},
): Promise<EmbeddedTemporal> {
  await mkdir(dataDir, { recursive: true });
  const port = (await portIsFree(7233)) ? 7233 : await freePort();
  const uiPort = (await portIsFree(8233)) ? 8233 : await freePort();
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    join(dataDir, 'temporal.db'),
    '--log-level',
    'error',
    // Payloads are encrypted (core/payload-codec.ts): the UI decodes them through Countersign's
    // codec endpoint, as the signed-in person, redacted for them.
    ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
    ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ...dynamicConfigArgs(),
  ];
  const child = spawn(cli, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const address = `127.0.0.1:${port}`;
  await waitForFrontend(address, child, () => stderr);
  return {
    address,
    uiUrl: `http://127.0.0.1:${uiPort}`,
    stop: () => stopChild(child),
  };
}

async function waitForFrontend(address: string, child: ChildProcess, log: () => string): Promise<void> {
  // Loaded here, after the spawn: the client SDK takes a while to load and the server meanwhile starts.
  const { Connection } = await import('@temporalio/client');
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited (${child.exitCode}): ${log()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`temporal dev server did not answer on ${address} within 60 s: ${log()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
