import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../store/crypto.ts';
import { newId } from '../../store/ids.ts';
import { mintSecret } from '../../store/secrets.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';
import { startTemporal } from '../harness/temporal.ts';
import { customAttributes, exitCode, runOneWorkflow, until } from '../helpers/processes.ts';
import { freePort } from '../helpers/service.ts';

// The production shape (DESIGN.md Processes): `countersign serve` and `countersign worker` as
// real processes against an external store and Temporal, and `serve --with-worker`.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/countersign.js');
const children: ChildProcess[] = [];
const stores: TestStore[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const s of stores) await s.drop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/**
 * `npm run build` into a fresh folder of its own (inside the repository, so node_modules
 * resolves from it), so this test runs the build of the sources it sees whatever dist/ holds.
 */
async function buildInto(): Promise<string> {
  const outdir = join(ROOT, 'test-output', `build-${randomBytes(4).toString('hex')}`);
  dirs.push(outdir);
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/build.js'), '--outdir', outdir, '--quiet'], {
    cwd: ROOT,
  });
  return outdir;
}

/** Whether the process has Temporal's native bridge (the worker's engine) mapped into memory. */
async function hasTemporalBridge(child: ChildProcess): Promise<boolean> {
  const maps = await readFile(`/proc/${child.pid}/maps`, 'utf8');
  return maps.includes('@temporalio/core-bridge');
}

async function environment(
  t: { address: string; namespace: string } = servers().temporal,
): Promise<{ env: NodeJS.ProcessEnv; url: string; apiKey: string }> {
  const store = await createTestStore();
  stores.push(store);
  const port = await freePort();
  const apiKey = mintSecret('cskey', newId('key')).secret;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    env: {
      // Not process.env: vitest sets BASE_URL=/ and friends there, which are not ours.
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: store.url,
      TEMPORAL_ADDRESS: t.address,
      TEMPORAL_NAMESPACE: t.namespace,
      TEMPORAL_TASK_QUEUE: `proc-${port}`,
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      COUNTERSIGN_API_KEY: apiKey,
      COUNTERSIGN_ADMIN_EMAIL: 'ops@example.test',
      COUNTERSIGN_ADMIN_PASSWORD: 'a long enough password',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    },
  };
}

function start(args: string[], env: NodeJS.ProcessEnv, entry = BIN): ChildProcess {
  const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.resume();
  child.stderr?.resume();
  children.push(child);
  return child;
}

/** A Temporal dev server of its own, started without the search attributes runs carry. */
async function withBareTemporal(
  fn: (bare: { server: { address: string; namespace: string } }) => Promise<void>,
) {
  const dir = await mkdtemp(join(tmpdir(), 'countersign-bare-temporal-'));
  const bare = await startTemporal({
    dir,
    port: await freePort(),
    uiPort: await freePort(),
    searchAttributes: false,
  });
  try {
    await fn(bare);
  } finally {
    await bare.process.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

describe('production processes', () => {
  it('run on the Node the project declares (npm puts node_modules/.bin/node first)', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
      devDependencies: Record<string, string>;
    };
    const major = Number(process.versions.node.split('.')[0]);
    expect(pkg.engines.node).toBe(`>=${major}`);
    expect(process.version).toBe(`v${pkg.devDependencies.node}`);
  });

  it('the compiled serve and worker (npm run build) run a workflow from the workflow bundle built with them', async () => {
    const outdir = await buildInto();
    const { env, url, apiKey } = await environment();
    const entry = join(outdir, 'countersign.js');
    const api = start(['serve'], env, entry);
    await until('the API', async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined));
    const worker = start(['worker'], { ...env, LOG_LEVEL: 'info' }, entry);
    let workerLog = '';
    worker.stdout?.on('data', (d: Buffer) => {
      workerLog += d.toString();
    });
    expect(await runOneWorkflow(url, apiKey)).toBe('succeeded');
    // The worker loaded the bundle built beside it, not the sources (bundled at start).
    expect(workerLog).toContain(`"workflows":"${join(outdir, 'workflow-bundle.js')}"`);
    // serve has no worker in it: Temporal's native worker engine was never loaded.
    expect(await hasTemporalBridge(api)).toBe(false);
    expect(await hasTemporalBridge(worker)).toBe(true);
    worker.kill('SIGTERM');
    api.kill('SIGTERM');
    expect(await exitCode(worker)).toBe(0);
    expect(await exitCode(api)).toBe(0);
  }, 180_000);

  it('bin/countersign.js runs a build only when it was made from the current sources', async () => {
    const outdir = await buildInto();
    const { buildState } = await import('../../bin/build-state.js');
    expect(buildState(outdir)).toEqual({ fresh: true });
    const manifest = JSON.parse(await readFile(join(outdir, 'build.json'), 'utf8')) as {
      inputs: Record<string, { size: number; mtimeMs: number; sha256: string }>;
    };
    expect(Object.keys(manifest.inputs)).toEqual(
      expect.arrayContaining(['cli/main.ts', 'workflows/index.ts', 'store/migrations/0001_identity.sql']),
    );
    // A source whose mtime moved but whose content did not (a checkout) keeps the build current.
    const entry = manifest.inputs['cli/main.ts']!;
    entry.mtimeMs -= 1000;
    await writeFile(join(outdir, 'build.json'), JSON.stringify(manifest));
    expect(buildState(outdir)).toEqual({ fresh: true });
    // A source whose content differs from what was built makes it stale, naming the file.
    entry.sha256 = '0'.repeat(64);
    await writeFile(join(outdir, 'build.json'), JSON.stringify(manifest));
    expect(buildState(outdir)).toEqual({ fresh: false, reason: 'cli/main.ts changed since the build' });
    expect(buildState(join(outdir, 'missing'))).toMatchObject({ fresh: false, missing: true });
  }, 180_000);

  it('serve and worker as separate processes run a workflow, and both stop cleanly on SIGTERM', async () => {
    const { env, url, apiKey } = await environment();
    const api = start(['serve'], env);
    await until('the API', async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined));
    const worker = start(['worker'], env);
    expect(await runOneWorkflow(url, apiKey)).toBe('succeeded');
    worker.kill('SIGTERM');
    api.kill('SIGTERM');
    expect(await exitCode(worker)).toBe(0);
    expect(await exitCode(api)).toBe(0);
  }, 180_000);

  // An operator's Temporal has none of our search attributes; the service creates them.
  it('serve and worker against a Temporal server without any search attribute start runs that succeed', async () => {
    await withBareTemporal(async (bare) => {
      const before = await customAttributes(bare.server);
      expect(before).not.toHaveProperty('CountersignWorkflowId');
      const { env, url, apiKey } = await environment(bare.server);
      const api = start(['serve'], env);
      const worker = start(['worker'], env);
      await until('the API', async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined));
      expect(await runOneWorkflow(url, apiKey)).toBe('succeeded');
      expect(await customAttributes(bare.server)).toHaveProperty('CountersignOrgId');
      worker.kill('SIGTERM');
      api.kill('SIGTERM');
      expect(await exitCode(worker)).toBe(0);
      expect(await exitCode(api)).toBe(0);
    });
  }, 180_000);

  it('a worker started alone creates the search attributes its runs carry', async () => {
    await withBareTemporal(async (bare) => {
      expect(await customAttributes(bare.server)).not.toHaveProperty('CountersignOrgId');
      const { env } = await environment(bare.server);
      const worker = start(['worker'], env);
      const attrs = await until('the search attributes', async () => {
        const now = await customAttributes(bare.server);
        return 'CountersignOrgId' in now ? now : undefined;
      });
      expect(attrs).toHaveProperty('CountersignWorkflowId');
      // It may still be bundling its workflows: this test is about what it did before.
      worker.kill('SIGKILL');
      await exitCode(worker);
    });
  }, 180_000);

  it('serve --with-worker runs both in one process', async () => {
    const { env, url, apiKey } = await environment();
    const both = start(['serve', '--with-worker'], env);
    expect(await runOneWorkflow(url, apiKey)).toBe('succeeded');
    both.kill('SIGTERM');
    expect(await exitCode(both)).toBe(0);
  }, 180_000);

  it('serve refuses to start without an encryption key, naming the variable', async () => {
    const { env } = await environment();
    const child = start(['serve'], { ...env, COUNTERSIGN_ENCRYPTION_KEY: '' });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    expect(await exitCode(child)).not.toBe(0);
    expect(stderr).toContain('COUNTERSIGN_ENCRYPTION_KEY');
  }, 60_000);
});
