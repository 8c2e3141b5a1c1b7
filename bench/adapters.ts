// What the adapter layer costs: check-connection on a fresh pool and a 1-row query on a warm pool,
// each against the same work on the bare driver, in the same run, against the harness servers
// (DESIGN.md, Conventions). The layer's own work should stay well under a millisecond.
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { mysqlAdapter, mysqlOptions } from '../adapters/mysql.ts';
import { postgresAdapter, postgresOptions } from '../adapters/postgres.ts';
import type { Adapter, ConnectionConfig } from '../adapters/types.ts';
import type { SqlServer } from '../test/harness/servers.ts';
import { startServers } from '../test/harness/start.ts';
import { type Bench, type BenchRow, percentile, sample } from './report.ts';

const QUERY_SAMPLES = 2000;
const CHECK_SAMPLES = 500;
const WARMUP = 50;
const TARGET_MS = 1;
const OPTS = { maxRows: 1000, timeoutSeconds: 30 };

const config = (adapter: 'postgres' | 'mysql', s: SqlServer): ConnectionConfig => ({
  adapter,
  hostname: s.host,
  port: s.port,
  database: s.database,
  username: s.user,
  password: s.password,
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: 30,
});

/**
 * p50 of `adapter` and of `bare`, one sample of each in turn (the first of the pair alternating),
 * so drift on a shared machine (other processes, CPU clock) hits both alike.
 */
async function compare(
  n: number,
  adapter: () => Promise<unknown>,
  bare: () => Promise<unknown>,
): Promise<[number, number]> {
  await sample(WARMUP, adapter, 0);
  await sample(WARMUP, bare, 0);
  const a: number[] = [];
  const b: number[] = [];
  const time = async (fn: () => Promise<unknown>, into: number[]) => {
    const t0 = performance.now();
    await fn();
    into.push(performance.now() - t0);
  };
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      await time(adapter, a);
      await time(bare, b);
    } else {
      await time(bare, b);
      await time(adapter, a);
    }
  }
  return [percentile(a, 50), percentile(b, 50)];
}

const ms = (x: number) => `${x.toFixed(3)} ms p50`;
const delta = (a: number, b: number) => `${a - b >= 0 ? '+' : ''}${(a - b).toFixed(3)} ms`;

function rows(
  engine: string,
  check: [number, number],
  query: [number, number],
  bareName: string,
  sql: string,
): BenchRow[] {
  return [
    {
      figure: `check-connection (${engine}): adapter check() on a fresh pool`,
      value: ms(check[0]),
      baseline: `bare ${bareName} (same options) connect + select 1: ${ms(check[1])}`,
      comparison: delta(...check),
    },
    {
      figure: `1-row query (${engine}, warm pool): ${sql}`,
      value: ms(query[0]),
      baseline: `bare ${bareName}, warm: ${ms(query[1])}`,
      comparison: `${delta(...query)} (target < ${TARGET_MS} ms)`,
    },
  ];
}

async function postgresRows(s: SqlServer): Promise<BenchRow[]> {
  const cfg = config('postgres', s);
  // The driver with the adapter's own options, so the difference is the layer, not the settings.
  const bareOptions = postgresOptions(cfg);
  const check = await compare(
    CHECK_SAMPLES,
    () => checkOnce(postgresAdapter, cfg),
    async () => {
      const client = new pg.Client(bareOptions);
      await client.connect();
      await client.query('select 1');
      await client.end();
    },
  );
  const text = 'select $1::int as n';
  const pool = postgresAdapter.connect(cfg);
  const bare = new pg.Client(bareOptions);
  await bare.connect();
  try {
    const query = await compare(
      QUERY_SAMPLES,
      () => pool.execute(text, [1], OPTS),
      () => bare.query(text, [1]),
    );
    // The layer's own part of a check: guarding the config, building the pool, closing it.
    const setup = percentile(
      await sample(QUERY_SAMPLES, async () => postgresAdapter.connect(cfg).close()),
      50,
    );
    return [
      ...rows('postgres', check, query, 'node-postgres', text),
      {
        figure: 'adapter connect() + close() without I/O (postgres)',
        value: ms(setup),
        baseline: '',
        comparison: `target < ${TARGET_MS} ms; the rest of a check is the driver's login (SCRAM)`,
      },
    ];
  } finally {
    await pool.close();
    await bare.end();
  }
}

async function mysqlRows(s: SqlServer): Promise<BenchRow[]> {
  const cfg = config('mysql', s);
  // The driver with the adapter's own options (mysql2's default prepared-statement cache alone
  // costs ~0.5 ms per connection), so the difference is the layer, not the settings.
  const { connectionLimit, maxIdle, idleTimeout, ...bareOptions } = mysqlOptions(cfg);
  const check = await compare(
    CHECK_SAMPLES,
    () => checkOnce(mysqlAdapter, cfg),
    // The same driver API the adapter's check uses (callbacks: the query queues behind the handshake).
    () =>
      new Promise<void>((resolve, reject) => {
        const conn = mysqlCallbacks.createConnection(bareOptions);
        conn.query('SELECT 1', (err) => {
          conn.destroy();
          if (err) reject(err);
          else resolve();
        });
      }),
  );
  const text = 'SELECT ? AS n';
  const pool = mysqlAdapter.connect(cfg);
  const bare = await mysql.createConnection(bareOptions);
  try {
    const query = await compare(
      QUERY_SAMPLES,
      () => pool.execute(text, [1], OPTS),
      () => bare.execute(text, [1]),
    );
    return rows('mariadb', check, query, 'mysql2', text);
  } finally {
    await pool.close();
    bare.destroy();
  }
}

async function checkOnce(adapter: Adapter, cfg: ConnectionConfig): Promise<void> {
  const pool = adapter.connect(cfg);
  try {
    await pool.check();
  } finally {
    await pool.close();
  }
}

const bench: Bench = {
  name: 'adapters',
  async run() {
    const started = await startServers({ log: () => {} });
    try {
      return [
        ...(await postgresRows(started.servers.postgres)),
        ...(await mysqlRows(started.servers.mariadb)),
      ];
    } finally {
      await started.stop();
    }
  },
};

export default bench;
