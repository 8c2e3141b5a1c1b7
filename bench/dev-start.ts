// Dev mode's second start: `node bin/countersign.js dev` on a data folder a first start already
// set up, from spawning the process to `/healthz` answering 200 and to the worker polling (the
// `Countersign is running` banner). Baseline in the same run: the Temporal dev server alone on the
// same SQLite file, from spawn to its frontend answering, which dev mode cannot beat. Target:
// /healthz within 4 s.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTemporalCli } from '../cli/embedded-temporal.ts';
import { freePorts } from '../test/harness/process.ts';
import { startTemporal } from '../test/harness/temporal.ts';
import { type Bench, type BenchRow, percentile } from './report.ts';

const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const STARTS = 3;
const TARGET_MS = 4000;

interface Start {
  healthzMs: number;
  runningMs: number;
}

async function startOnce(dataDir: string): Promise<Start> {
  const [port] = await freePorts(1);
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'dev'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      COUNTERSIGN_DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let runningMs = Number.NaN;
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (Number.isNaN(runningMs) && out.includes('Worker ready')) runningMs = performance.now() - t0;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  try {
    let healthzMs = Number.NaN;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && (Number.isNaN(healthzMs) || Number.isNaN(runningMs))) {
      if (child.exitCode !== null)
        throw new Error(`dev mode exited (${child.exitCode}): ${out.slice(-2000)}`);
      if (Number.isNaN(healthzMs)) {
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
          .then((r) => r.ok)
          .catch(() => false);
        if (ok) healthzMs = performance.now() - t0;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    if (Number.isNaN(healthzMs) || Number.isNaN(runningMs))
      throw new Error(`dev mode did not come up within 120 s: ${out.slice(-2000)}`);
    return { healthzMs, runningMs };
  } finally {
    await stop(child);
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGINT');
  });
}

/** The Temporal dev server alone on a SQLite file, spawn to frontend answering. */
async function temporalAlone(dir: string): Promise<number> {
  const [port, uiPort] = await freePorts(2);
  const t0 = performance.now();
  const started = await startTemporal({
    dir,
    port: port!,
    uiPort: uiPort!,
    dbFilename: join(dir, 'temporal.db'),
  });
  const ms = performance.now() - t0;
  await started.process.stop('SIGTERM');
  return ms;
}

const bench: Bench = {
  name: 'dev-start',
  async run(): Promise<BenchRow[]> {
    if (!(await findTemporalCli(process.env.TEMPORAL_CLI_PATH ?? null)))
      throw new Error('the temporal CLI is missing: bash test/setup-deps.sh --temporal-only');
    const dataDir = await mkdtemp(join(tmpdir(), 'countersign-bench-dev-'));
    const temporalDir = await mkdtemp(join(tmpdir(), 'countersign-bench-temporal-'));
    try {
      await startOnce(dataDir); // the first start: migrations, bootstrap, Temporal's schema
      await temporalAlone(temporalDir);
      const starts: Start[] = [];
      const alone: number[] = [];
      for (let i = 0; i < STARTS; i++) {
        starts.push(await startOnce(dataDir));
        alone.push(await temporalAlone(temporalDir));
      }
      const p50 = (xs: number[]) => percentile(xs, 50);
      const healthz = p50(starts.map((s) => s.healthzMs));
      const running = p50(starts.map((s) => s.runningMs));
      const base = p50(alone);
      const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
      return [
        {
          figure: `dev mode second start to /healthz (median of ${STARTS})`,
          value: s(healthz),
          baseline: `Temporal dev server alone ${s(base)}`,
          comparison: `+${s(healthz - base)}; ${healthz <= TARGET_MS ? 'meets' : 'MISSES'} target ≤ ${s(TARGET_MS)}`,
        },
        {
          figure: `dev mode second start to worker polling (median of ${STARTS})`,
          value: s(running),
          baseline: `Temporal dev server alone ${s(base)}`,
          comparison: `+${s(running - base)}`,
        },
      ];
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(temporalDir, { recursive: true, force: true });
    }
  },
};

export default bench;
