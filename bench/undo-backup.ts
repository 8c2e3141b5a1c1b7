// What keeping the rows for undo adds to an approved write (governance/undo/), on PostgreSQL and
// MariaDB: the same UPDATE run alone (autocommit) and with its backup (in one transaction: the
// read of the touched rows, the write while the rows are sealed with the keyring and inserted on
// the store, the store's commit, the write's commit), for 1 row and 1 000 rows. Interleaved in one
// run, so load hits both alike. The figure is the added latency, the difference of the two p50s,
// held against the write's own p50: the target is an overhead below 2× the write for 1 000 rows.
import postgres from 'postgres';
import { mysqlAdapter } from '../adapters/mysql.ts';
import { postgresAdapter } from '../adapters/postgres.ts';
import type { AdapterName, AdapterPool, ConnectionConfig } from '../adapters/types.ts';
import { keptColumns, rowsRead, savedRowsDocument, writeTarget } from '../governance/undo/statements.ts';
import { Keyring } from '../store/crypto.ts';
import type { SqlServer } from '../test/harness/servers.ts';
import { startServers } from '../test/harness/start.ts';
import { type Bench, type BenchRow, interleaved, percentile } from './report.ts';

const TARGET = 2;
const W = { maxRows: 1, timeoutSeconds: 30 };
const COLUMNS = ['id', 'status', 'total'];

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

async function rows(
  adapter: AdapterName,
  label: string,
  pool: AdapterPool,
  store: postgres.Sql,
  table: string,
): Promise<BenchRow[]> {
  const keyring = new Keyring(Buffer.alloc(32, 7));
  let n = 0;
  const out: BenchRow[] = [];
  for (const [count, samples] of [
    [1, 200],
    [1000, 40],
  ] as const) {
    const statement = (status: string) => `update ${table} set status = '${status}' where id <= ${count}`;
    const plain = () => pool.execute(statement(`p${n++}`), [], W);
    const saved = {
      verb: 'UPDATE' as const,
      schema: 's',
      name: table,
      keys: ['id'],
      columns: COLUMNS,
      assigned: ['status'],
    };
    // The read is built from the write's parse tree before the request is claimed (undo/plan.ts),
    // outside the write's transaction; its cost is the separate planning row below.
    const target = await writeTarget(adapter, statement('k'));
    if (target.kind !== 'target') throw new Error(target.reason);
    const select = target.select(keptColumns(saved), 10_001);
    const readRows = (r: unknown[][]) => rowsRead(adapter, r);
    const kept = async () => {
      const write = statement(`k${n++}`);
      return pool.execute(write, [], {
        ...W,
        backup: {
          select,
          params: [],
          maxRows: 10_000,
          readRows,
          // What undo keeps (governance/undo/index.ts): the rows as one sealed document, inserted
          // on the service's store (postgres.js) while the write runs, committed once it ran.
          save: async (r, written) => {
            const sealed = keyring.encrypt(savedRowsDocument(adapter, saved, r).json, 'x');
            await store.begin(async (tx) => {
              await tx`insert into bench_backups (rows_enc) values (${sealed})`;
              if (!(await written)) throw new Error('not written');
            });
          },
        },
      });
    };
    // The same backup without the store's insert (its commit waits for the store's disk).
    const sealedOnly = async () => {
      const write = statement(`s${n++}`);
      return pool.execute(write, [], {
        ...W,
        backup: {
          select,
          params: [],
          maxRows: 10_000,
          readRows,
          save: async (r) => void keyring.encrypt(savedRowsDocument(adapter, saved, r).json, 'x'),
        },
      });
    };
    const [a, b, c] = await interleaved(samples, [plain, kept, sealedOnly], Math.min(20, samples));
    const pa = percentile(a!, 50);
    const pb = percentile(b!, 50);
    const pc = percentile(c!, 50);
    // "+a ms = n× the write": the overhead against the write's own time; "(×t)": the whole against it.
    const added = (p: number) =>
      `+${(p - pa).toFixed(3)} ms = ${((p - pa) / pa).toFixed(2)}× the write (${p.toFixed(3)} ms p50, ×${(p / pa).toFixed(2)})`;
    out.push({
      figure: `${label}: the added latency of keeping the rows of a ${count}-row UPDATE for undo`,
      value: added(pb),
      baseline: `the write alone ${pa.toFixed(3)} ms p50`,
      comparison:
        count === 1000
          ? `target: overhead < ${TARGET}× the write`
          : "added round trips: the read, the commit, the store's commit",
    });
    out.push({
      figure: `${label}: the same, rows sealed but not stored (the store's insert and commit left out)`,
      value: added(pc),
      baseline: `the write alone ${pa.toFixed(3)} ms p50`,
      comparison: 'the part spent on the target database',
    });
  }
  const plan = await interleaved(
    100,
    [() => writeTarget(adapter, `update ${table} set status = 'x' where id <= 1`)],
    10,
  );
  out.push({
    figure: `${label}: building the read from the write's parse tree (before the transaction)`,
    value: `${percentile(plan[0]!, 50).toFixed(3)} ms p50`,
    baseline: '',
    comparison: 'once per run of a request, not inside the write',
  });
  return out;
}

const bench: Bench = {
  name: 'undo-backup',
  async run() {
    const started = await startServers({ log: () => {} });
    const pg = postgresAdapter.connect(config('postgres', started.servers.postgres));
    const my = mysqlAdapter.connect(config('mysql', started.servers.mariadb));
    const s = started.servers.postgres;
    const store = postgres({
      host: s.host,
      port: s.port,
      database: s.database,
      username: s.user,
      password: s.password,
      max: 2,
      onnotice: () => {},
    });
    const table = `bench_undo_${Date.now().toString(36)}`;
    try {
      await pg.execute(
        'create table if not exists bench_backups (id serial primary key, rows_enc text)',
        [],
        W,
      );
      await pg.execute(`create table ${table} (id int primary key, status text, total numeric)`, [], W);
      await pg.execute(`insert into ${table} select g, 'open', g from generate_series(1, 10000) g`, [], W);
      await my.execute(
        `create table ${table} (id int primary key, status varchar(20), total decimal(12,2))`,
        [],
        W,
      );
      // Ten batches of 1 000 (MariaDB stops a recursive CTE at 1 000 iterations by default).
      for (let k = 0; k < 10; k++)
        await my.execute(
          `insert into ${table} with recursive g(n) as (select 1 union all select n + 1 from g where n < 1000) select n + ${k * 1000}, 'open', n from g`,
          [],
          W,
        );
      return [
        ...(await rows('postgres', 'PostgreSQL', pg, store, table)),
        ...(await rows('mysql', 'MariaDB', my, store, table)),
      ];
    } finally {
      await pg.execute(`drop table if exists ${table}`, [], W).catch(() => {});
      await pg.execute('drop table if exists bench_backups', [], W).catch(() => {});
      await my.execute(`drop table if exists ${table}`, [], W).catch(() => {});
      await store.end();
      await pg.close();
      await my.close();
      await started.stop();
    }
  },
};

export default bench;
