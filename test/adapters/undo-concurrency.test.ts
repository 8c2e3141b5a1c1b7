// A change made by another connection while a write's backup is being read cannot escape the
// backup (governance/undo/, adapters' `backup` step), on the real PostgreSQL and MariaDB. The
// write's own WHERE calls a gate that blocks its read, once started, on a lock this test holds;
// another connection changes the table and commits meanwhile; then the gate opens. Either the write
// fails and nothing of it is written, or the rows kept are exactly the rows it touched, and the
// inverse statement puts exactly those back.
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlAdapter } from '../../adapters/mysql.ts';
import { postgresAdapter } from '../../adapters/postgres.ts';
import type { AdapterName, AdapterPool, QueryResult } from '../../adapters/types.ts';
import {
  inverseStatement,
  keptColumns,
  rowsRead,
  type SavedWrite,
  savedRowsDocument,
  writeTarget,
} from '../../governance/undo/statements.ts';
import { servers } from '../harness/servers.ts';
import { configFor } from './configs.ts';

const OPTS = { maxRows: 100, timeoutSeconds: 20 };
const COLUMNS = ['id', 'v', 'u'];
/** The kept write: `update … set v = 'w' where …` of a table (id primary key, v, u). */
const SAVED: SavedWrite = {
  verb: 'UPDATE',
  schema: '',
  name: '',
  keys: ['id'],
  columns: COLUMNS,
  assigned: ['v'],
};
const KEPT = keptColumns(SAVED);

/** Polls `check` until it holds (the other session is waiting at the gate). */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the write never reached the gate');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `write` with its backup; resolves with the answer and the kept document, or the error. */
function runKept(adapter: AdapterName, pool: AdapterPool, write: string, select: string) {
  const kept: { json: string; count: number }[] = [];
  const answer = pool.execute(write, [], {
    ...OPTS,
    backup: {
      select,
      params: [],
      maxRows: 100,
      readRows: (rows) => rowsRead(adapter, rows),
      // As the service keeps them (governance/undo/index.ts): only once told the write ran.
      save: async (rows, written) => {
        const doc = savedRowsDocument(adapter, SAVED, rows);
        if (await written) kept.push(doc);
      },
    },
  });
  return answer.then(
    (result: QueryResult) => ({ result, kept: kept[0], error: null }),
    (error: unknown) => ({ result: null, kept: kept[0], error }),
  );
}

describe('postgres: a change during the backup read', () => {
  const server = () => servers().postgres;
  let pool: AdapterPool;
  let holder: pg.Client;
  let other: pg.Client;
  const connect = async () => {
    const s = server();
    const c = new pg.Client({
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
    });
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    pool = postgresAdapter.connect(configFor('postgres', server()));
    holder = await connect();
    other = await connect();
    // The gate: a shared advisory lock, blocked while the test holds it exclusively.
    await other.query(`create or replace function undo_gate() returns boolean language plpgsql volatile as
      $$ begin perform pg_advisory_xact_lock_shared(4242); return true; end $$`);
  });
  afterAll(async () => {
    await pool?.close();
    await holder?.end();
    await other?.end();
  });

  async function table(): Promise<string> {
    const name = `undo_race_${Math.random().toString(36).slice(2, 8)}`;
    await other.query(`create table ${name} (id int primary key, v text, u int)`);
    await other.query(`insert into ${name} values (1, 'a', 0), (2, 'a', 0), (3, 'a', 0)`);
    return name;
  }
  /** The write, started and held at its gate while `meanwhile` runs on another connection. */
  async function race(name: string, meanwhile: string) {
    const write = `update ${name} set v = 'w' where v = 'a' and undo_gate()`;
    const target = await writeTarget('postgres', write);
    if (target.kind !== 'target') throw new Error(target.reason);
    await holder.query('select pg_advisory_lock(4242)');
    const running = runKept('postgres', pool, write, target.select(KEPT, 101));
    try {
      await until(
        async () =>
          (await other.query("select 1 from pg_locks where locktype = 'advisory' and not granted"))
            .rowCount! > 0,
      );
      await other.query(meanwhile);
    } finally {
      await holder.query('select pg_advisory_unlock(4242)');
    }
    return running;
  }
  const rows = async (name: string) => (await other.query(`select id, v, u from ${name} order by id`)).rows;

  it('a row inserted meanwhile is neither kept nor written, and undo puts back exactly the rows written', async () => {
    const name = await table();
    const { result, kept, error } = await race(name, `insert into ${name} values (4, 'a', 0)`);
    expect(error).toBeNull();
    expect(result!.num_rows).toBe(3);
    expect(await rows(name)).toEqual([
      { id: 1, v: 'w', u: 0 },
      { id: 2, v: 'w', u: 0 },
      { id: 3, v: 'w', u: 0 },
      { id: 4, v: 'a', u: 0 },
    ]);
    expect(kept!.count).toBe(3);
    const keptIds = (JSON.parse(kept!.json) as Array<{ id: number }>).map((r) => r.id).sort();
    expect(keptIds).toEqual([1, 2, 3]);
    const inverse = inverseStatement('postgres', {
      verb: 'UPDATE',
      schema: 'public',
      name,
      keys: ['id'],
      columns: COLUMNS,
      assigned: ['v'],
    });
    await pool.execute(inverse, [kept!.json], OPTS);
    expect((await rows(name)).map((r) => r.v)).toEqual(['a', 'a', 'a', 'a']);
  });

  it('a kept row changed meanwhile fails the write: nothing is written, nothing kept', async () => {
    const name = await table();
    const { kept, error } = await race(name, `update ${name} set u = 1 where id = 2`);
    expect(error).toMatchObject({ code: '40001' });
    expect(kept).toBeUndefined();
    expect(await rows(name)).toEqual([
      { id: 1, v: 'a', u: 0 },
      { id: 2, v: 'a', u: 1 },
      { id: 3, v: 'a', u: 0 },
    ]);
  });
});

describe('mariadb: a change during the backup read', () => {
  const server = () => servers().mariadb;
  let pool: AdapterPool;
  let holder: mysql.Connection;
  let other: mysql.Connection;
  const connect = () => {
    const s = server();
    return mysql.createConnection({
      host: s.host,
      port: s.port,
      user: s.user,
      password: s.password,
      database: s.database,
    });
  };

  beforeAll(async () => {
    pool = mysqlAdapter.connect(configFor('mysql', server()));
    holder = await connect();
    other = await connect();
  });
  afterAll(async () => {
    await pool?.close();
    await holder?.end();
    await other?.end();
  });

  it('rows inserted and changed meanwhile: the rows kept are exactly the rows written, and undo puts them back', async () => {
    const name = `undo_race_${Math.random().toString(36).slice(2, 8)}`;
    await other.query(`create table ${name} (id int primary key, v varchar(5), u int)`);
    await other.query(`insert into ${name} values (1, 'a', 0), (2, 'a', 0), (3, 'a', 0)`);
    const write = `update ${name} set v = 'w' where v = 'a' and get_lock('undo_gate', 20) = 1`;
    const target = await writeTarget('mysql', write);
    if (target.kind !== 'target') throw new Error(target.reason);
    await holder.query("select get_lock('undo_gate', 5)");
    const running = runKept('mysql', pool, write, target.select(KEPT, 101));
    let meanwhile: Promise<unknown>;
    try {
      await until(async () => {
        const [r] = await other.query(
          "select 1 from information_schema.PROCESSLIST where STATE = 'User lock'",
        );
        return (r as unknown[]).length > 0;
      });
      // Autocommitted on their own connection; they may wait for the write's locks, or not.
      meanwhile = Promise.all([
        other.query(`insert into ${name} values (4, 'a', 0)`),
        other.query(`update ${name} set u = 1 where id = 2`),
      ]);
      // The read holds only the row it met first (row 1, where its gate waits): both commit
      // before the gate opens.
      const settled = await Promise.race([
        meanwhile.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 5_000)),
      ]);
      expect(settled).toBe(true);
    } finally {
      await holder.query("select release_lock('undo_gate')");
    }
    const { result, kept, error } = await running;
    await meanwhile!;
    const [after] = (await other.query(`select id, v, u from ${name} order by id`)) as unknown as [
      Array<{ id: number; v: string; u: number }>,
    ];
    if (error) {
      // The write failed: nothing of it is written.
      expect(after.every((r) => r.v === 'a')).toBe(true);
      return;
    }
    const written = after.filter((r) => r.v === 'w').map((r) => r.id);
    expect(result!.num_rows).toBe(written.length);
    const keptIds = (JSON.parse(kept!.json) as Array<{ v0: string }>)
      .map((r) => Number(Buffer.from(r.v0, 'hex').toString()))
      .sort();
    expect(kept!.count).toBe(written.length);
    expect(keptIds).toEqual(written);
    // Row 4 was committed before the gate opened: the locking read met it, so the write did too.
    expect(written).toEqual([1, 2, 3, 4]);
    const inverse = inverseStatement('mysql', {
      verb: 'UPDATE',
      schema: server().database,
      name,
      keys: ['id'],
      columns: COLUMNS,
      assigned: ['v'],
    });
    await pool.execute(inverse, [kept!.json], OPTS);
    const [back] = (await other.query(`select id, v, u from ${name} order by id`)) as unknown as [
      Array<{ id: number; v: string; u: number }>,
    ];
    expect(back).toEqual(after.map((r) => ({ ...r, v: 'a' })));
  });
});
