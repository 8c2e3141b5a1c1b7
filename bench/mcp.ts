// run_query through /mcp (HTTP, bearer JWT check, grant and user lookups, the governed pipeline
// with its audit append) against the same 1-row query through @bytebase/dbhub's MCP
// `execute_sql` (a direct, ungoverned MCP server) on the same PostgreSQL, in the same run. Our
// calls speak MCP 2025-11-25 (the v1 SDK client, as dbhub's are), and once more 2026-07-28 (the
// v2 SDK client pinned to it) for the sequential figure. Countersign runs as `countersign serve`
// in a process of its own, compiled as in production, like dbhub: in the bench's own process it
// would share one event loop with the eight clients that drive it, and dbhub does not.
// Google's MCP Toolbox for Databases (a Go server, `toolbox --prebuilt postgres`, tool
// `execute_sql`) is the second peer, in the same rounds: dbhub is not the fastest direct server.
// A third reference is the runtime's floor (bench/peers/node-floor.mjs: node:http and
// node-postgres answering the same tool call with nothing governed), so the CPU a governed call
// costs can be split into what Node itself needs and what Countersign adds.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import postgres from 'postgres';
import { buildDeps } from '../cli/boot.ts';
import { NODE_FLAGS } from '../cli/node-flags.ts';
import { loadConfig } from '../config/env.ts';
import type { Deps } from '../core/deps.ts';
import { createUser } from '../identity/manage.ts';
import { approve, checkAuthorizationRequest, s256 } from '../identity/oauth-authorize.ts';
import { registerClient } from '../identity/oauth-clients.ts';
import { exchangeCode } from '../identity/oauth-tokens.ts';
import { generateKey } from '../store/crypto.ts';
import { newId } from '../store/ids.ts';
import { findClient } from '../store/oauth.ts';
import { insertOrganization } from '../store/users.ts';
import { freePorts } from '../test/harness/process.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { type Bench, type BenchRow, interleaved, percentile } from './report.ts';
import { doors } from './support/doors.ts';
import { registerBenchPostgres } from './support/world.ts';

const BENCH_PASSWORD = 'bench-password-of-the-mcp-bench';
const SAMPLES = Number(process.env.BENCH_MCP_SAMPLES ?? 1000);
const WARMUP = 100;
const CONCURRENCY = 8;
const THROUGHPUT_CALLS = Number(process.env.BENCH_MCP_CALLS ?? 2000);
/**
 * Paired rounds (one of each server, back to back, the order alternating). The machine is shared
 * and its speed wanders within seconds: with three rounds the ratio of the two medians spread
 * over 0.79–1.17 between runs of the same build, while each pair, run within about three seconds,
 * sees nearly the same machine. The ratio reported is the median of the pairs' ratios.
 */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 7);

const pair = (xs: number[]) =>
  `${percentile(xs, 50).toFixed(2)} ms p50, ${percentile(xs, 99).toFixed(2)} ms p99`;

async function connectMcp(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'countersign-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Calls per second: `CONCURRENCY` clients, each with its own connection, sharing the calls. */
async function throughput(callers: Array<() => Promise<unknown>>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    callers.map(async (call) => {
      while (next++ < THROUGHPUT_CALLS) await call();
    }),
  );
  return THROUGHPUT_CALLS / ((performance.now() - t0) / 1000);
}

function expectOk(result: Record<string, unknown>): void {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
}

const bench: Bench = {
  name: 'mcp',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const pg = started.servers.postgres;
    const store = await createTestStore(pg);
    const table = `bench_mcp_${Date.now()}`;
    const bare = postgres({
      host: pg.host,
      port: pg.port,
      database: pg.database,
      username: pg.user,
      password: pg.password,
      max: 1,
      onnotice: () => {},
    });
    const [apiPort, dbhubPort, toolboxPort, floorPort] = await freePorts(4);
    const postmaster = postmasterPid(started.dir);
    const env = {
      DATABASE_URL: store.url,
      PORT: String(apiPort),
      COUNTERSIGN_ENCRYPTION_KEY: generateKey(),
      LOG_LEVEL: 'silent',
    };
    const config = loadConfig(env);
    // The same deps as `countersign serve` builds.
    const deps = await buildDeps(config, {
      storeUrl: store.url,
      storeMax: 10,
      temporalAddress: null,
      dev: false,
    });
    const sql = deps.sql;
    // `npm start`'s shape: the compiled build (made now if the sources changed), its own process.
    execFileSync(process.execPath, ['bin/build.js', '--if-stale', '--quiet'], { stdio: 'inherit' });
    // The flags of `npm start` and the Dockerfile's ENTRYPOINT (cli/node-flags.ts).
    const serve = spawn(process.execPath, [...NODE_FLAGS, 'bin/countersign.js', 'serve'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...env,
        TEMPORAL_ADDRESS: started.servers.temporal.address,
        TEMPORAL_NAMESPACE: started.servers.temporal.namespace,
        COUNTERSIGN_RUN: 'dist',
        // e.g. BENCH_SERVE_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the server alone.
        ...(process.env.BENCH_SERVE_NODE_OPTIONS
          ? { NODE_OPTIONS: process.env.BENCH_SERVE_NODE_OPTIONS }
          : {}),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const api = { url: `http://127.0.0.1:${apiPort}` };
    await retry(async () => {
      if (!(await fetch(`${api.url}/healthz`)).ok) throw new Error('not ready');
    });
    let dbhub: ChildProcess | null = null;
    let toolbox: ChildProcess | null = null;
    let floor: ChildProcess | null = null;
    const clients: Client[] = [];
    const closers: Array<() => Promise<unknown>> = [];
    try {
      await bare`create table ${bare(table)} (id int primary key, name text)`;
      await bare`insert into ${bare(table)} values (1, 'a')`;
      const org = await insertOrganization(sql, { id: newId('org'), name: 'bench' });
      const user = await createUser(sql, {
        orgId: org.id,
        email: 'bench@example.test',
        role: 'member',
        password: BENCH_PASSWORD,
      });
      const { db, credentials } = await registerBenchPostgres(deps, org.id, pg, { ai: true });
      const token = await accessToken(deps, user.id);

      const ours = await connectMcp(`${api.url}/mcp`, { authorization: `Bearer ${token}` });
      clients.push(ours);
      const statement = `select name from ${table} where id = 1`;
      const viaCountersign = async () =>
        expectOk(
          await ours.callTool({ name: 'run_query', arguments: { database_id: db.id, sql: statement } }),
        );

      dbhub = spawn(
        join(process.cwd(), 'node_modules/.bin/dbhub'),
        [
          '--transport',
          'http',
          '--port',
          String(dbhubPort),
          '--dsn',
          `postgres://${encodeURIComponent(pg.user)}:${encodeURIComponent(pg.password)}@${pg.host}:${pg.port}/${pg.database}?sslmode=disable`,
        ],
        { stdio: 'ignore' },
      );
      const theirs = await retry(() => connectMcp(`http://127.0.0.1:${dbhubPort}/mcp`));
      clients.push(theirs);
      const viaDbhub = async () =>
        expectOk(await theirs.callTool({ name: 'execute_sql', arguments: { sql: statement } }));

      toolbox = spawn(
        toolboxBinary(),
        [
          '--prebuilt',
          'postgres',
          '--port',
          String(toolboxPort),
          '--disable-version-check',
          '--log-level',
          'ERROR',
        ],
        {
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            POSTGRES_HOST: pg.host,
            POSTGRES_PORT: String(pg.port),
            POSTGRES_DATABASE: pg.database,
            POSTGRES_USER: pg.user,
            POSTGRES_PASSWORD: pg.password,
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      const google = await retry(() => connectMcp(`http://127.0.0.1:${toolboxPort}/mcp`));
      clients.push(google);
      const viaToolbox = async () =>
        expectOk(await google.callTool({ name: 'execute_sql', arguments: { sql: statement } }));

      // The runtime's own floor: node:http + node-postgres, nothing governed (bench/peers/node-floor.mjs).
      floor = spawn(process.execPath, [join(process.cwd(), 'bench/peers/node-floor.mjs')], {
        env: {
          PATH: process.env.PATH,
          PORT: String(floorPort),
          PGHOST: pg.host,
          PGPORT: String(pg.port),
          PGDATABASE: pg.database,
          PGUSER: pg.user,
          PGPASSWORD: pg.password,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await retry(() => connectMcp(`http://127.0.0.1:${floorPort}/mcp`).then((c) => c.close()));

      const modern = new ModernClient(
        { name: 'countersign-bench', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await modern.connect(
        new ModernTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      closers.push(() => modern.close());
      const viaModern = async () =>
        expectOk(
          (await modern.callTool({
            name: 'run_query',
            arguments: { database_id: db.id, sql: statement },
          })) as Record<string, unknown>,
        );

      // The same query through the REST route and the console, and through the bare driver.
      const door = await doors(
        sql,
        api.url,
        { orgId: org.id, userId: user.id, email: 'bench@example.test', password: BENCH_PASSWORD },
        { databaseId: db.id, credentialId: credentials[0]!.id },
        statement,
      );
      const viaBare = async () => void (await bare.unsafe(statement));

      const [countersign, direct, countersignModern, viaGoogle, viaRest, viaConsole, driver] =
        await interleaved(
          SAMPLES,
          [viaCountersign, viaDbhub, viaModern, viaToolbox, door.rest, door.console, viaBare],
          WARMUP,
        );
      const callers = async (
        url: string,
        headers: Record<string, string>,
        call: (c: Client) => Promise<unknown>,
      ) => {
        const list: Array<() => Promise<unknown>> = [];
        for (let i = 0; i < CONCURRENCY; i++) {
          const c = await connectMcp(url, headers);
          clients.push(c);
          list.push(() => call(c));
        }
        return list;
      };
      const oursCallers = await callers(`${api.url}/mcp`, { authorization: `Bearer ${token}` }, async (c) =>
        expectOk(await c.callTool({ name: 'run_query', arguments: { database_id: db.id, sql: statement } })),
      );
      const theirsCallers = await callers(`http://127.0.0.1:${dbhubPort}/mcp`, {}, async (c) =>
        expectOk(await c.callTool({ name: 'execute_sql', arguments: { sql: statement } })),
      );
      const googleCallers = await callers(`http://127.0.0.1:${toolboxPort}/mcp`, {}, async (c) =>
        expectOk(await c.callTool({ name: 'execute_sql', arguments: { sql: statement } })),
      );
      const floorCallers = await callers(`http://127.0.0.1:${floorPort}/mcp`, {}, async (c) =>
        expectOk(await c.callTool({ name: 'execute_sql', arguments: { sql: statement } })),
      );
      // Rounds alternate which server goes first, so the machine's drift (it is shared, and its
      // speed wanders by 2× over minutes) falls on both alike; each figure is the median round.
      const mine = { perSecond: [] as number[], cpu: zeroCpu() };
      const baseline = { perSecond: [] as number[], cpu: zeroCpu() };
      const go = { perSecond: [] as number[], cpu: zeroCpu() };
      const bareNode = { perSecond: [] as number[], cpu: zeroCpu() };
      let loadedRss = 0;
      // One uncounted round each first: the eight new sessions' first calls (and the JIT's first
      // sight of eight at once) would otherwise fall on whichever server goes first.
      await throughput(oursCallers);
      await throughput(theirsCallers);
      await throughput(googleCallers);
      await throughput(floorCallers);
      if (process.env.BENCH_PG_STAT_STATEMENTS) {
        await sql`create extension if not exists pg_stat_statements`;
        await sql`select pg_stat_statements_reset()`;
      }
      for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
        const phases = [
          async () => {
            const done = cpuCount(serve.pid!, postmaster);
            mine.perSecond.push(await throughput(oursCallers));
            addCpu(mine.cpu, done());
            // Resident memory of serve right after a round of calls (≤ 300 MB under load).
            loadedRss = Math.max(loadedRss, rssMb(serve.pid));
          },
          async () => {
            const done = cpuCount(dbhub!.pid!, postmaster);
            baseline.perSecond.push(await throughput(theirsCallers));
            addCpu(baseline.cpu, done());
          },
          async () => {
            const done = cpuCount(toolbox!.pid!, postmaster);
            go.perSecond.push(await throughput(googleCallers));
            addCpu(go.cpu, done());
          },
          async () => {
            const done = cpuCount(floor!.pid!, postmaster);
            bareNode.perSecond.push(await throughput(floorCallers));
            addCpu(bareNode.cpu, done());
          },
        ];
        // Four servers: each goes first, second, third and last in turn.
        for (let k = 0; k < round % phases.length; k++) phases.push(phases.shift()!);
        for (const phase of phases) await phase();
      }
      if (process.env.BENCH_PG_STAT_STATEMENTS) await printStatements(sql);
      const oursPerSecond = percentile(mine.perSecond, 50);
      const theirsPerSecond = percentile(baseline.perSecond, 50);
      const googlePerSecond = percentile(go.perSecond, 50);
      const calls = THROUGHPUT_ROUNDS * THROUGHPUT_CALLS;
      const p50 = (xs: number[]) => percentile(xs, 50);
      const delta = (xs: number[], ys: number[]) => {
        const d = p50(xs) - p50(ys);
        return `${d < 0 ? '−' : '+'}${Math.abs(d).toFixed(2)} ms p50 (ratio ${(p50(xs) / p50(ys)).toFixed(2)})`;
      };
      const pairRatios = (ys: number[]) => mine.perSecond.map((x, i) => x / ys[i]!);
      const paired = (ys: number[]) => {
        const r = pairRatios(ys);
        return `ratio ${percentile(r, 50).toFixed(2)} (median of ${THROUGHPUT_ROUNDS} paired rounds; lowest ${Math.min(...r).toFixed(2)})`;
      };
      const rounds = (xs: number[]) => xs.map(Math.round).join(', ');
      return [
        {
          figure: 'MCP run_query, 1-row query, sequential (governed, audited, bearer JWT)',
          value: pair(countersign!),
          baseline: `dbhub 1.4.0 execute_sql: ${pair(direct!)}`,
          comparison: delta(countersign!, direct!),
        },
        {
          figure: 'the same against MCP Toolbox for Databases',
          value: pair(countersign!),
          baseline: `Toolbox 1.12.0 execute_sql: ${pair(viaGoogle!)}`,
          comparison: delta(countersign!, viaGoogle!),
        },
        {
          figure: 'the same over MCP 2026-07-28 (stateless core, v2 SDK client)',
          value: pair(countersignModern!),
          baseline: `dbhub 1.4.0 execute_sql (2025-11-25): ${pair(direct!)}`,
          comparison: `ratio ${(p50(countersignModern!) / p50(direct!)).toFixed(2)}; Toolbox ${(p50(countersignModern!) / p50(viaGoogle!)).toFixed(2)}`,
        },
        {
          figure: 'REST query route, the same query, sequential (API key, POST /api/v1/desk/query-requests)',
          value: pair(viaRest!),
          baseline: `bare postgres.js: ${pair(driver!)}`,
          comparison: delta(viaRest!, driver!),
        },
        {
          figure: 'console, the same query, sequential (signed-in form post, the whole page with its result)',
          value: pair(viaConsole!),
          baseline: `bare postgres.js: ${pair(driver!)}`,
          comparison: delta(viaConsole!, driver!),
        },
        {
          figure: `MCP run_query calls/s, ${CONCURRENCY} concurrent clients`,
          value: `${Math.round(oursPerSecond)} calls/s (rounds: ${rounds(mine.perSecond)})`,
          baseline: `dbhub execute_sql: ${Math.round(theirsPerSecond)} calls/s (${rounds(baseline.perSecond)})`,
          comparison: paired(baseline.perSecond),
        },
        {
          figure: `the same against MCP Toolbox for Databases`,
          value: `${Math.round(oursPerSecond)} calls/s`,
          baseline: `Toolbox execute_sql: ${Math.round(googlePerSecond)} calls/s (${rounds(go.perSecond)})`,
          comparison: paired(go.perSecond),
        },
        {
          figure: 'CPU per call during the 8-client run (server, PostgreSQL, clients)',
          value: cpuPerCall(mine.cpu, calls),
          baseline: `dbhub: ${cpuPerCall(baseline.cpu, calls)}; Toolbox: ${cpuPerCall(go.cpu, calls)}`,
          comparison: `budget: server ≤ 0.20, postgres ≤ 0.12 ms (${mine.cpu.server / calls <= 0.0002 && mine.cpu.pg / calls <= 0.00012 ? 'met' : 'not met'})`,
        },
        {
          figure:
            'the floor of a Node server for the same call: node:http + node-postgres, one ungoverned tool (8 clients)',
          value: `${Math.round(percentile(bareNode.perSecond, 50))} calls/s; ${cpuPerCall(bareNode.cpu, calls)}`,
          baseline: `Countersign ${Math.round(oursPerSecond)} calls/s`,
          comparison: `Countersign/floor ${pairRatios(bareNode.perSecond).length ? percentile(pairRatios(bareNode.perSecond), 50).toFixed(2) : '–'} (paired); what the runtime costs before any governance`,
        },
        {
          figure: `serve RSS right after each round of ${THROUGHPUT_CALLS} calls from ${CONCURRENCY} clients (highest; built, own process)`,
          value: `${loadedRss} MB`,
          baseline: 'target ≤ 300 MB',
          comparison: loadedRss <= 300 ? 'met' : 'not met',
        },
      ];
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      for (const close of closers) await close().catch(() => {});
      dbhub?.kill('SIGTERM');
      toolbox?.kill('SIGTERM');
      floor?.kill('SIGTERM');
      serve.kill('SIGTERM');
      if (serve.exitCode === null) await new Promise((r) => serve.once('exit', r));
      await deps.pools.closeAll();
      await bare`drop table if exists ${bare(table)}`.catch(() => {});
      await bare.end({ timeout: 1 });
      await sql.end({ timeout: 1 });
      await store.drop();
      await started.stop();
    }
  },
};
export default bench;

/** CPU seconds a process has used so far (utime + stime, /proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0; // gone since it was listed
  }
}

/** The bench cluster's postmaster (first line of postmaster.pid in its data directory). */
function postmasterPid(serversDir: string): number {
  return Number(
    readFileSync(join(serversDir, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n', 1)[0],
  );
}

/**
 * The bench cluster's server processes (the store's and the target's: one cluster): its
 * postmaster and the postmaster's children. Other PostgreSQL clusters on a shared machine (other
 * test runs) are not counted.
 */
function postgresPids(postmaster: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      if (pid === postmaster) return true;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    });
}

/** The Go binary itself (not the npm wrapper that spawns it), so its CPU is counted in /proc. */
function toolboxBinary(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@toolbox-sdk/server-linux-x64/package.json')), 'bin', 'toolbox');
}

interface CpuSeconds {
  server: number;
  pg: number;
  clients: number;
  /** CPU seconds of the whole machine left idle (all cores; /proc/stat idle + iowait). */
  idle: number;
  /** Wall seconds counted. */
  wall: number;
}

const zeroCpu = (): CpuSeconds => ({ server: 0, pg: 0, clients: 0, idle: 0, wall: 0 });

function addCpu(into: CpuSeconds, x: CpuSeconds): void {
  into.server += x.server;
  into.pg += x.pg;
  into.clients += x.clients;
  into.idle += x.idle;
  into.wall += x.wall;
}

/** Idle CPU seconds of the machine so far: /proc/stat's `cpu` line, fields idle and iowait. */
function idleSeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  return (Number(fields[4]) + Number(fields[5])) / 100;
}

/**
 * Starts counting CPU time of the server, PostgreSQL and this process (the clients); the returned
 * function ends the count.
 */
function cpuCount(server: number, postmaster: number): () => CpuSeconds {
  // Per process: a backend that ends during the count takes its CPU with it (not counted), and
  // one that starts counts from zero; a sum over the start's processes would go negative then.
  const pgs = () => new Map(postgresPids(postmaster).map((pid) => [pid, cpuSeconds(pid)]));
  const start = {
    server: cpuSeconds(server),
    pg: pgs(),
    clients: process.cpuUsage(),
    idle: idleSeconds(),
    wall: performance.now(),
  };
  return () => {
    const c = process.cpuUsage(start.clients);
    let pg = 0;
    for (const [pid, now] of pgs()) pg += now - (start.pg.get(pid) ?? 0);
    return {
      server: cpuSeconds(server) - start.server,
      pg,
      clients: (c.user + c.system) / 1e6,
      idle: idleSeconds() - start.idle,
      wall: (performance.now() - start.wall) / 1000,
    };
  };
}

function cpuPerCall(cpu: CpuSeconds, calls: number): string {
  const ms = (s: number) => ((s * 1000) / calls).toFixed(2);
  // Idle as a share of all the machine's cores over the counted time: what a faster path could use.
  const idle = Math.round((100 * cpu.idle) / (cpu.wall * availableParallelism()));
  return `server ${ms(cpu.server)}, postgres ${ms(cpu.pg)}, clients ${ms(cpu.clients)} ms; machine ${idle} % idle, load ${loadavg()[0]!.toFixed(1)}`;
}

/** The statements that took PostgreSQL's time during the rounds (all three servers'), to stderr. */
async function printStatements(sql: Deps['sql']): Promise<void> {
  const rows = await sql<{ calls: string; total: number; mean: number; query: string }[]>`
    select calls::text, round(total_exec_time::numeric, 1)::float8 as total,
           round(mean_exec_time::numeric, 4)::float8 as mean, left(regexp_replace(query, '\s+', ' ', 'g'), 160) as query
    from pg_stat_statements order by total_exec_time desc limit 15`;
  for (const r of rows)
    process.stderr.write(
      `pg_stat_statements: ${r.calls} calls, ${r.total} ms, ${r.mean} ms each: ${r.query}\n`,
    );
}

function rssMb(pid: number | undefined): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb) / 1024);
}

/** A real grant through the domain functions: register, authorize (PKCE), exchange the code. */
async function accessToken(deps: Deps, userId: string): Promise<string> {
  const redirect = 'http://127.0.0.1:1/cb';
  const reg = await registerClient(deps.sql, {
    metadata: { redirect_uris: [redirect], token_endpoint_auth_method: 'none', client_name: 'bench' },
    address: 'bench',
    perAddress: deps.config.rateLimits.registrationsPerAddress,
  });
  if (reg === 'rate_limited') throw new Error('rate limited');
  const verifier = 'v'.repeat(43);
  const params = new URLSearchParams({
    client_id: String(reg.client_id),
    redirect_uri: redirect,
    response_type: 'code',
    code_challenge: s256(verifier),
    code_challenge_method: 'S256',
  });
  const req = await checkAuthorizationRequest(deps, params);
  const code = new URL(await approve(deps, userId, req)).searchParams.get('code')!;
  const client = (await findClient(deps.sql, String(reg.client_id)))!;
  return (await exchangeCode(deps, client, { code, codeVerifier: verifier, redirectUri: redirect }))
    .access_token;
}

async function retry<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
