// What an agent tunnel costs: the same 1-row query and the same 100 000-row result through a
// real agent process (service hub -> WebSocket -> agent -> PostgreSQL) and on a direct
// connection with the same TLS settings (verify-full), interleaved in the same run.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';
import { postgresAdapter } from '../adapters/index.ts';
import type { AdapterPool, ConnectionConfig } from '../adapters/types.ts';
import { startApi } from '../api/server.ts';
import { openMigratedStore } from '../cli/boot.ts';
import { loadConfig } from '../config/env.ts';
import type { Deps } from '../core/deps.ts';
import { createLogger } from '../core/logger.ts';
import { registerAgent } from '../registry/agents.ts';
import { CreateDatabase } from '../registry/database-input.ts';
import { createDatabase } from '../registry/databases.ts';
import { generateKey, Keyring } from '../store/crypto.ts';
import { newId } from '../store/ids.ts';
import { insertOrganization } from '../store/users.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { AgentHub } from '../tunnels/hub.ts';
import { createAgentAwarePools, routedAdapterFor } from '../tunnels/pools.ts';
import { type Bench, type BenchRow, interleaved, percentile } from './report.ts';
import { BENCH_ACTOR } from './support/world.ts';

const SAMPLES = 1000;
const WARMUP = 100;
const BIG_ROWS = 100_000;
const BIG_RUNS = 7;
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));

const ms = (xs: number[], q: number) => percentile(xs, q).toFixed(3);

const bench: Bench = {
  name: 'agents',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const pg = started.servers.postgres;
    const store = await createTestStore(pg);
    const sql = await openMigratedStore(store.url, { max: 5 });
    const logger = createLogger('silent');
    const hub = new AgentHub({ sql, logger });
    const keyring = Keyring.fromBase64(generateKey());
    const deps: Deps = {
      config: loadConfig({
        DATABASE_URL: store.url,
        PORT: '0',
        LOG_LEVEL: 'silent',
        BASE_URL: 'http://127.0.0.1',
      }),
      sql,
      keyring,
      logger,
      temporal: null,
      pools: createAgentAwarePools(hub),
      agents: hub,
    };
    const api = await startApi(deps);
    const pools: AdapterPool[] = [];
    const agent = { kill: () => {} };
    try {
      const org = await insertOrganization(sql, { id: newId('org'), name: 'bench' });
      const { agent: row, token } = await registerAgent(
        { sql },
        { orgId: org.id, actor: BENCH_ACTOR, origin: 'user' },
        'bench',
      );
      const ssl = {
        enabled: true,
        caCert: pg.tls.caCert,
        verifyServerHostname: true,
        clientCert: null,
        clientKey: null,
      };
      // Assigns the database to the agent, which puts it on the agent's allowlist.
      await createDatabase(
        { sql, keyring, pools: deps.pools },
        { orgId: org.id, actor: BENCH_ACTOR, origin: 'user' },
        v.parse(CreateDatabase, {
          name: 'bench',
          adapter: 'postgres',
          hostname: pg.tls.rightHostname,
          port: pg.port,
          database: pg.database,
          agent_id: row.id,
          credentials: [{ username: pg.user, password: pg.password }],
        }),
      );
      const child = spawn(process.execPath, [BIN, 'agent', '--server', api.url], {
        env: { ...process.env, COUNTERSIGN_AGENT_TOKEN: token },
        stdio: 'ignore',
      });
      agent.kill = () => child.kill('SIGTERM');
      const deadline = Date.now() + 60_000;
      while (!hub.isConnected(row.id)) {
        if (Date.now() > deadline) throw new Error('the agent did not connect');
        await new Promise((r) => setTimeout(r, 50));
      }
      const config: ConnectionConfig = {
        adapter: 'postgres',
        hostname: pg.tls.rightHostname,
        port: pg.port,
        database: pg.database,
        username: pg.user,
        password: pg.password,
        ssl,
        timeoutSeconds: 60,
      };
      const direct = postgresAdapter.connect(config);
      const tunneled = routedAdapterFor('postgres', hub).connect({
        ...config,
        agentId: row.id,
      } as ConnectionConfig);
      pools.push(direct, tunneled);
      const one = { maxRows: 10, timeoutSeconds: 60 };
      const [viaAgent, straight] = await interleaved(
        SAMPLES,
        [() => tunneled.execute('select 1 as n', [], one), () => direct.execute('select 1 as n', [], one)],
        WARMUP,
      );

      const big = `select g, md5(g::text) as h from generate_series(1, ${BIG_ROWS}) g`;
      const many = { maxRows: BIG_ROWS, timeoutSeconds: 60 };
      const [bigAgent, bigDirect] = await interleaved(
        BIG_RUNS,
        [
          async () => {
            const r = await tunneled.execute(big, [], many);
            if (r.num_rows !== BIG_ROWS) throw new Error(`tunnel returned ${r.num_rows} rows`);
          },
          () => direct.execute(big, [], many),
        ],
        WARMUP,
      );
      const rate = (xs: number[]) => Math.round(BIG_ROWS / (percentile(xs, 50) / 1000));
      return [
        {
          figure: '1-row query through an agent (postgres, verify-full)',
          value: `${ms(viaAgent!, 50)} ms p50, ${ms(viaAgent!, 99)} ms p99`,
          baseline: `direct ${ms(straight!, 50)} ms p50, ${ms(straight!, 99)} ms p99`,
          comparison: `+${(percentile(viaAgent!, 50) - percentile(straight!, 50)).toFixed(3)} ms p50, +${(percentile(viaAgent!, 99) - percentile(straight!, 99)).toFixed(3)} ms p99`,
        },
        {
          figure: `${BIG_ROWS.toLocaleString('en')}-row result through an agent (postgres)`,
          value: `${ms(bigAgent!, 50)} ms p50 (${rate(bigAgent!).toLocaleString('en')} rows/s)`,
          baseline: `direct ${ms(bigDirect!, 50)} ms p50 (${rate(bigDirect!).toLocaleString('en')} rows/s)`,
          comparison: `ratio ${(percentile(bigAgent!, 50) / percentile(bigDirect!, 50)).toFixed(2)}`,
        },
      ];
    } finally {
      for (const p of pools) await p.close().catch(() => {});
      agent.kill();
      await api.close();
      await hub.close();
      await sql.end({ timeout: 5 });
      await store.drop();
      await started.stop();
    }
  },
};

export default bench;
