// Start-up and idle memory of the production processes: `serve` and `worker` from the
// compiled build (bin/build.js, as `npm start` / `npm run worker` run them) against the same
// commands from the TypeScript sources through tsx (the baseline, as before the build step),
// started in the same run against the same real PostgreSQL and Temporal.
//
// Time to ready: spawn → `serve` answers /readyz 200 (store and Temporal reached), `worker` logs
// "worker started" (connected, workflow code loaded). Idle RSS: the resident set of a process that
// has been ready and idle for IDLE_MS (V8 gives back its start-up garbage after some 20 s idle).
// Idle CPU: what the process spent over the last CPU_WINDOW_MS of that time (/proc/<pid>/stat),
// with nothing asked of it: its timers, probes and pollers only.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateKey } from '../store/crypto.ts';
import { freePorts } from '../test/harness/process.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { type Bench, type BenchRow, percentile } from './report.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STARTS = 3;
const IDLE_MS = 30_000;
const CPU_WINDOW_MS = 10_000;
const TARGET_MB = { serve: 180, worker: 200 } as const;

type Role = keyof typeof TARGET_MB;
interface Variant {
  name: string;
  /** node arguments before the command. */
  args: string[];
  env: Record<string, string>;
}
interface Measured {
  readyMs: number[];
  rssMb: number;
  /** Percent of one core over the last CPU_WINDOW_MS of the idle time. */
  idleCpu: number;
}

const bench: Bench = {
  name: 'processes',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const outdir = join(ROOT, 'test-output', `bench-build-${randomBytes(4).toString('hex')}`);
    const children: ChildProcess[] = [];
    try {
      const { postgres: pg, temporal: t } = started.servers;
      const store = await createTestStore(pg);
      const t0 = performance.now();
      await promisify(execFile)(process.execPath, [
        join(ROOT, 'bin/build.js'),
        '--outdir',
        outdir,
        '--quiet',
      ]);
      const buildMs = performance.now() - t0;
      const base = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: store.url,
        TEMPORAL_ADDRESS: t.address,
        TEMPORAL_NAMESPACE: t.namespace,
        TEMPORAL_TASK_QUEUE: `bench-processes-${randomBytes(3).toString('hex')}`,
        COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
        COUNTERSIGN_ADMIN_EMAIL: 'bench@example.test',
        COUNTERSIGN_ADMIN_PASSWORD: 'a long enough bench password',
        LOG_LEVEL: 'info',
      };
      const built: Variant = { name: 'built', args: [join(outdir, 'countersign.js')], env: base };
      const sources: Variant = {
        name: 'sources (tsx)',
        args: [join(ROOT, 'bin/countersign.js')],
        env: { ...base, COUNTERSIGN_RUN: 'sources' },
      };

      const rows: BenchRow[] = [
        {
          figure: 'npm run build (esbuild + workflow bundle)',
          value: seconds(buildMs),
          baseline: '',
          comparison: '',
        },
      ];
      for (const role of ['serve', 'worker'] as const) {
        const [b, s] = await measurePair(role, built, sources, children);
        rows.push(
          {
            figure: `${role} idle RSS, built (${IDLE_MS / 1000} s idle)`,
            value: `${b.rssMb.toFixed(0)} MB`,
            baseline: `sources through tsx ${s.rssMb.toFixed(0)} MB`,
            comparison: `${(b.rssMb - s.rssMb).toFixed(0)} MB; target ≤ ${TARGET_MB[role]} MB: ${b.rssMb <= TARGET_MB[role] ? 'met' : 'MISSED'}`,
          },
          {
            figure: `${role} idle CPU, built (the last ${CPU_WINDOW_MS / 1000} s of ${IDLE_MS / 1000} s idle)`,
            value: `${b.idleCpu.toFixed(1)} % of a core`,
            baseline: `sources through tsx ${s.idleCpu.toFixed(1)} %`,
            comparison: 'timers, probes and pollers only: no request was made',
          },
          {
            figure: `${role} time to ready, built (p50 of ${STARTS})`,
            value: `${percentile(b.readyMs, 50).toFixed(0)} ms`,
            baseline: `sources through tsx ${percentile(s.readyMs, 50).toFixed(0)} ms`,
            comparison: `ratio ${(percentile(b.readyMs, 50) / percentile(s.readyMs, 50)).toFixed(2)}`,
          },
        );
      }
      await store.drop();
      return rows;
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
      await rm(outdir, { recursive: true, force: true });
      await started.stop();
    }
  },
};
export default bench;

/**
 * STARTS cold starts of each variant in turn (time to ready); the last process of each stays up,
 * both idle together, and their RSS is read IDLE_MS after each was ready.
 */
async function measurePair(
  role: Role,
  a: Variant,
  b: Variant,
  children: ChildProcess[],
): Promise<[Measured, Measured]> {
  const ready: [number[], number[]] = [[], []];
  const last: Array<{ child: ChildProcess; readyAt: number }> = [];
  for (let i = 0; i < STARTS; i++) {
    for (const [k, variant] of [a, b].entries()) {
      const run = await startOne(role, variant, children);
      ready[k]!.push(run.readyMs);
      if (i < STARTS - 1) await stop(run.child);
      else last[k] = { child: run.child, readyAt: performance.now() };
    }
  }
  // Both idle at once; each is read on its own clock.
  const idle = await Promise.all(
    last.map(async ({ child, readyAt }) => {
      await until(readyAt + IDLE_MS - CPU_WINDOW_MS);
      const [cpu0, t0] = [await cpuTicks(child), performance.now()];
      await until(readyAt + IDLE_MS);
      const [cpu1, t1] = [await cpuTicks(child), performance.now()];
      // Clock ticks are hundredths of a second (USER_HZ): ticks per ms × 1000 is percent.
      return { rssMb: await rssMb(child), idleCpu: ((cpu1 - cpu0) * 1000) / (t1 - t0) };
    }),
  );
  for (const { child } of last) await stop(child);
  return [
    { readyMs: ready[0], ...idle[0]! },
    { readyMs: ready[1], ...idle[1]! },
  ];
}

async function until(at: number): Promise<void> {
  const wait = at - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** User and system CPU of the process so far, in clock ticks (/proc/<pid>/stat fields 14 and 15). */
async function cpuTicks(child: ChildProcess): Promise<number> {
  const fields = (await readFile(`/proc/${child.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function startOne(
  role: Role,
  variant: Variant,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; readyMs: number }> {
  const [port] = await freePorts(1);
  const env = { ...variant.env, PORT: String(port) };
  const t0 = performance.now();
  const child = spawn(process.execPath, [...variant.args, role], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${role} (${variant.name}) exited: ${output.slice(-2000)}`);
    if (Date.now() > deadline)
      throw new Error(`${role} (${variant.name}) never got ready: ${output.slice(-2000)}`);
    const ready =
      role === 'serve'
        ? await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          )
        : output.includes('"msg":"worker started"');
    if (ready) return { child, readyMs: performance.now() - t0 };
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function rssMb(child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
  return kb / 1024;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
