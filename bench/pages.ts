// What a person waits for in the browser: the compiled `serve` (as `npm start` runs it) answers
// each signed-in page, and Debian's Chromium measures its first contentful paint (the Paint
// Timing API), median of several loads per page; beside it the HTML each page sends and the SQL
// editor's script, compressed. Targets: first paint ≤ 300 ms, every page's HTML ≤ 30 KB, the
// editor's script ≤ 300 KB compressed.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { NODE_FLAGS } from '../cli/node-flags.ts';
import { generateKey } from '../store/crypto.ts';
import { freePorts } from '../test/harness/process.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { type Bench, type BenchRow, percentile } from './report.ts';

const LOADS = 7;
const TARGET_PAINT_MS = 300;
const TARGET_HTML_BYTES = 30_000;
const TARGET_SCRIPT_GZIP = 300 * 1024;
const ADMIN = { email: 'bench-pages@example.test', password: 'a long enough bench password' };
const PAGES = [
  '/dashboards',
  '/console',
  '/databases',
  '/reviews',
  '/workflows',
  '/runs',
  '/audit',
  '/people',
  '/organization',
  '/settings',
  '/settings/ai',
];

// The paint entry can be queued after `load`: wait for it through a buffered observer. A string,
// so the bundler's helpers never reach the page.
const FIRST_PAINT = `new Promise((resolve) => {
  new PerformanceObserver((list) => {
    const e = list.getEntries().find((x) => x.name === 'first-contentful-paint');
    if (e) resolve(e.startTime);
  }).observe({ type: 'paint', buffered: true });
  setTimeout(() => resolve(null), 2000);
})`;

const bench: Bench = {
  name: 'pages',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const store = await createTestStore(started.servers.postgres);
    const [port] = await freePorts(1);
    const url = `http://127.0.0.1:${port}`;
    execFileSync(process.execPath, ['bin/build.js', '--if-stale', '--quiet'], { stdio: 'inherit' });
    const serve: ChildProcess = spawn(process.execPath, [...NODE_FLAGS, 'bin/countersign.js', 'serve'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: store.url,
        PORT: String(port),
        COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
        COUNTERSIGN_ADMIN_EMAIL: ADMIN.email,
        COUNTERSIGN_ADMIN_PASSWORD: ADMIN.password,
        TEMPORAL_ADDRESS: started.servers.temporal.address,
        TEMPORAL_NAMESPACE: started.servers.temporal.namespace,
        COUNTERSIGN_RUN: 'dist',
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking'],
    });
    try {
      await ready(`${url}/healthz`);
      const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${url}/login`);
      await page.fill('#email', ADMIN.email);
      await page.fill('#password', ADMIN.password);
      await Promise.all([page.waitForURL(/dashboards/), page.click('button[type=submit]')]);
      const paints: Record<string, number[]> = {};
      const html: Record<string, number> = {};
      // One load of each page first (assets cached, as for a person moving between pages).
      for (const path of PAGES) await page.goto(`${url}${path}`);
      for (let i = 0; i < LOADS; i++) {
        for (const path of PAGES) {
          const res = await page.goto(`${url}${path}`, { waitUntil: 'load' });
          if (!res?.ok()) throw new Error(`${path} answered ${res?.status()}`);
          html[path] = (await res.body()).length;
          const fcp = (await page.evaluate(FIRST_PAINT)) as number | null;
          if (fcp === null) throw new Error(`${path}: no first contentful paint recorded`);
          paints[path] = [...(paints[path] ?? []), fcp];
        }
      }
      const p50s = PAGES.map((p) => [p, percentile(paints[p]!, 50)] as const).sort((a, b) => b[1] - a[1]);
      const slowest = p50s[0]!;
      const heaviest = Object.entries(html).sort((a, b) => b[1] - a[1])[0]!;
      const script = await fetch(`${url}/assets/sql-editor.js`);
      if (!script.ok) throw new Error(`the editor script answered ${script.status}`);
      const gz = gzipSync(Buffer.from(await script.arrayBuffer())).length;
      const chart = readFileSync('dist/assets/dashboard-chart.js', { flag: 'r' });
      return [
        {
          figure: `first contentful paint of ${PAGES.length} signed-in pages, laptop (median of ${LOADS} loads each)`,
          value: `slowest ${slowest[0]} ${slowest[1].toFixed(0)} ms; median page ${percentile(
            p50s.map((x) => x[1]),
            50,
          ).toFixed(0)} ms`,
          baseline: '',
          comparison: `${slowest[1] <= TARGET_PAINT_MS ? 'meets' : 'MISSES'} target ≤ ${TARGET_PAINT_MS} ms`,
        },
        {
          figure: 'HTML of the heaviest signed-in page',
          value: `${heaviest[0]} ${heaviest[1]} bytes`,
          baseline: '',
          comparison: `${heaviest[1] <= TARGET_HTML_BYTES ? 'meets' : 'MISSES'} target ≤ ${TARGET_HTML_BYTES} bytes`,
        },
        {
          figure: 'SQL editor script (CodeMirror), gzip',
          value: `${gz} bytes`,
          baseline: `dashboard chart script ${gzipSync(chart).length} bytes gzip`,
          comparison: `${gz <= TARGET_SCRIPT_GZIP ? 'meets' : 'MISSES'} target ≤ 300 KB`,
        },
      ];
    } finally {
      await browser.close();
      serve.kill('SIGTERM');
      await new Promise((r) => serve.once('exit', r));
      await store.drop();
      await started.stop();
    }
  },
};

async function ready(at: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(at)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${at} never answered`);
}

export default bench;
