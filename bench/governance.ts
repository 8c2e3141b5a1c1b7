// What the governed-query pipeline adds to a query: access (database, grant, credential),
// classification, the data-protection hook, and the hash-chained audit append — measured as the
// same 1-row query through runGovernedQuery, through the adapter pool it uses, and on the bare
// driver, interleaved in the same run (DESIGN.md, Conventions). Target: < 2 ms added at p50.

import { availableParallelism, loadavg } from 'node:os';
import postgres from 'postgres';
import { createPoolRegistry } from '../adapters/index.ts';
import { recordAttempt, verifyAuditChain } from '../audit/events.ts';
import { openMigratedStore } from '../cli/boot.ts';
import { createLogger } from '../core/logger.ts';
import { connectionConfigFor, poolVersion } from '../governance/connections.ts';
import {
  DEFAULT_TIMEOUT_SECONDS,
  type GovernanceDeps,
  HARD_MAX_ROWS,
  type QueryActor,
  resolveTarget,
  runGovernedQuery,
} from '../governance/query.ts';
import { createUser } from '../identity/manage.ts';
import { classifyStatement } from '../sql/classify.ts';
import { generateKey, Keyring } from '../store/crypto.ts';
import { insertGrant } from '../store/grants.ts';
import { newId } from '../store/ids.ts';
import { insertOrganization } from '../store/users.ts';
import { startServers } from '../test/harness/start.ts';
import { createTestStore } from '../test/harness/store.ts';
import { type Bench, type BenchRow, interleaved, percentile, sample } from './report.ts';
import { registerBenchPostgres } from './support/world.ts';

const SAMPLES = 1500;
const WARMUP = 100;
const TARGET_MS = 2;
const CONCURRENT_APPENDS = 2000;
const CONCURRENCY = 32;

const p = (xs: number[], q: number) => percentile(xs, q);
const pair = (xs: number[]) => `${p(xs, 50).toFixed(3)} ms p50, ${p(xs, 99).toFixed(3)} ms p99`;
const added = (a: number[], b: number[]) =>
  `+${(p(a, 50) - p(b, 50)).toFixed(3)} ms p50, +${(p(a, 99) - p(b, 99)).toFixed(3)} ms p99`;

const bench: Bench = {
  name: 'governance',
  async run(): Promise<BenchRow[]> {
    const started = await startServers({ log: () => {} });
    const pg = started.servers.postgres;
    const store = await createTestStore(pg);
    const sql = await openMigratedStore(store.url, { max: 10 });
    const pools = createPoolRegistry();
    const table = `bench_gov_${Date.now()}`;
    const bare = postgres({
      host: pg.host,
      port: pg.port,
      database: pg.database,
      username: pg.user,
      password: pg.password,
      max: 1,
      onnotice: () => {},
    });
    try {
      await bare`create table ${bare(table)} (id int primary key, name text)`;
      await bare`insert into ${bare(table)} values (1, 'a'), (2, 'b'), (3, 'c')`;
      const keyring = Keyring.fromBase64(generateKey());
      const org = await insertOrganization(sql, { id: newId('org'), name: 'bench' });
      const user = await createUser(sql, {
        orgId: org.id,
        email: 'bench@example.test',
        role: 'member',
        password: null,
      });
      // The slow path of access: a restricted database that the member reaches through a grant.
      const { db, credentials } = await registerBenchPostgres({ sql, keyring, pools }, org.id, pg, {
        restricted: true,
      });
      await insertGrant(sql, { id: newId('grt'), databaseId: db.id, userId: user.id, grantedBy: null });
      const gov: GovernanceDeps = { sql, keyring, logger: createLogger('silent'), pools };
      const actor: QueryActor = { kind: 'user', userId: user.id, role: 'member' };
      const statement = `select name from ${table} where id = $1`;
      const q = { orgId: org.id, actor, origin: 'user' as const, databaseId: db.id, statement };
      let i = 0;
      const param = () => (i++ % 3) + 1;
      // The very pool the pipeline uses, reached without the pipeline.
      await runGovernedQuery(gov, { ...q, params: [1] });
      const cred = credentials[0]!;
      const { db: row, cred: credRow } = await resolveTarget(sql, { ...q, credentialId: cred.id });
      const pool = pools.acquire(
        { databaseId: row.id, credentialId: credRow.id, version: poolVersion(row, credRow) },
        () => connectionConfigFor(keyring, row, credRow),
      );
      const opts = { maxRows: HARD_MAX_ROWS, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };

      const [governed, adapter, driver] = await interleaved(
        SAMPLES,
        [
          () => runGovernedQuery(gov, { ...q, params: [param()] }),
          () => pool.execute(statement, [param()], opts),
          () => bare.unsafe(statement, [param()]),
        ],
        WARMUP,
      );
      const access = await sample(SAMPLES, () => resolveTarget(sql, q), WARMUP);
      const classifyHot = await sample(SAMPLES, () => classifyStatement('postgres', statement), WARMUP);
      const classifyCold = await sample(
        SAMPLES,
        () => classifyStatement('postgres', `${statement} /* ${i++} */`),
        WARMUP,
      );
      const attempt = {
        orgId: org.id,
        actor,
        origin: 'user' as const,
        databaseId: db.id,
        credentialId: cred.id,
        statement,
        params: [1],
        classification: 'read' as const,
        outcome: 'allowed' as const,
        rowsReturned: 1,
        durationMs: 1,
      };
      const audit = await sample(SAMPLES, () => recordAttempt(sql, attempt), WARMUP);
      // Appends of one organization serialize on its chain head: throughput with many writers.
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < CONCURRENT_APPENDS) await recordAttempt(sql, attempt);
        }),
      );
      const perSecond = CONCURRENT_APPENDS / ((performance.now() - t0) / 1000);
      // Two `serve` replicas: two store pools, each with its own batching queue and audit lane
      // (store/audit-writer.ts), writing one organization's chain at once; they meet at the
      // chain head's row lock. Half the writers on each.
      const replica = await openMigratedStore(store.url, { max: 10 });
      let perSecondTwo = 0;
      try {
        const t1 = performance.now();
        let shared = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async (_, k) => {
            const via = k % 2 === 0 ? sql : replica;
            while (shared++ < CONCURRENT_APPENDS) await recordAttempt(via, attempt);
          }),
        );
        perSecondTwo = CONCURRENT_APPENDS / ((performance.now() - t1) / 1000);
      } finally {
        await replica.end({ timeout: 1 });
      }
      const chain = await verifyAuditChain(sql, org.id);
      if (!chain.ok) throw new Error(`the chain does not verify after the appends: ${chain.broken?.reason}`);

      return [
        {
          figure: `governed 1-row query (postgres, restricted + grant): ${statement.replace(table, 't')}`,
          value: pair(governed!),
          baseline: `bare postgres.js: ${pair(driver!)}`,
          comparison: `${added(governed!, driver!)} (target < ${TARGET_MS} ms p50)`,
        },
        {
          figure: 'pipeline only (governed vs the adapter pool it runs on)',
          value: pair(governed!),
          baseline: `adapter pool: ${pair(adapter!)}`,
          comparison: added(governed!, adapter!),
        },
        {
          figure: 'part: access (database, grant, credential)',
          value: pair(access),
          baseline: '',
          comparison: '',
        },
        {
          figure: 'part: classification, libpg-query (cached / uncached)',
          value: `${p(classifyHot, 50).toFixed(4)} ms / ${p(classifyCold, 50).toFixed(3)} ms p50`,
          baseline: '',
          comparison: `uncached p99 ${p(classifyCold, 99).toFixed(3)} ms`,
        },
        {
          figure: 'part: audit append (hash chain, one statement)',
          value: pair(audit),
          baseline: '',
          comparison: '',
        },
        {
          // Shared machines skew every figure above alike; this says how busy this one was.
          figure: 'machine load during the run',
          value: `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
          baseline: '',
          comparison: '',
        },
        {
          figure: `audit appends, one organization, ${CONCURRENCY} concurrent writers`,
          value: `${Math.round(perSecond)} entries/s`,
          baseline: '',
          comparison: '',
        },
        {
          figure: `the same across 2 serve replicas (two store pools, ${CONCURRENCY / 2} writers each)`,
          value: `${Math.round(perSecondTwo)} entries/s`,
          baseline: `one replica: ${Math.round(perSecond)} entries/s`,
          comparison: `ratio ${(perSecondTwo / perSecond).toFixed(2)}; chain of ${chain.entries} entries verified`,
        },
      ];
    } finally {
      await pools.closeAll();
      await bare`drop table if exists ${bare(table)}`.catch(() => {});
      await bare.end({ timeout: 1 });
      await sql.end({ timeout: 1 });
      await store.drop();
      await started.stop();
    }
  },
};

export default bench;
