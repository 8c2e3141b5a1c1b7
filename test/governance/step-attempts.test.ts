// Attempts of an exactly-once write step (governance/once.ts) against the harness PostgreSQL
// (prepared transactions) and MariaDB (XA), with the real store arbitrating. The orderings that a
// loaded machine produces by chance are built here on purpose: a transaction prepared by a session
// the server has not yet seen end, and an older attempt that sweeps after a newer one prepared.
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlAdapter } from '../../adapters/mysql.ts';
import { postgresAdapter } from '../../adapters/postgres.ts';
import type { AdapterPool, QueryResult } from '../../adapters/types.ts';
import { runStepAttempt, type StepAttempt, stepTagPrefix } from '../../governance/once.ts';
import { openStore, type Sql } from '../../store/db.ts';
import { newId } from '../../store/ids.ts';
import { migrate } from '../../store/migrate.ts';
import { configFor } from '../adapters/configs.ts';
import { servers } from '../harness/servers.ts';
import { createTestStore, type TestStore } from '../harness/store.ts';

const TABLE = `step_attempts_${newId('db').slice(-8).toLowerCase()}`;
const INSERTED: QueryResult = {
  columns: [],
  rows: [],
  command: 'INSERT',
  messages: [],
  num_rows: 1,
  truncated: false,
};

let store: TestStore;
let sql: Sql;
const prefixes: string[] = [];

interface Target {
  name: string;
  pool: AdapterPool;
  /**
   * Inserts `note` in a transaction prepared as `id` on a connection of its own, and returns
   * how to close that connection: `settled` waits until the server has let the session go.
   */
  prepareHeld(id: string, note: string): Promise<(settled: boolean) => Promise<void>>;
  count(note: string): Promise<number>;
  admin: { run(text: string): Promise<unknown>; end(): Promise<void> };
}

const targets: Target[] = [];

beforeAll(async () => {
  store = await createTestStore();
  sql = openStore(store.url, { max: 4 });
  await migrate(sql);

  const p = servers().postgres;
  const pgOptions = { ...p, username: p.user, onnotice: () => {} };
  const pg = postgres({ ...pgOptions, max: 2 });
  await pg.unsafe(`create table ${TABLE} (id serial primary key, note text not null)`);
  targets.push({
    name: 'PostgreSQL',
    pool: postgresAdapter.connect(configFor('postgres', p)),
    prepareHeld: async (id, note) => {
      const conn = postgres({ ...pgOptions, max: 1 });
      await conn.unsafe('begin');
      await conn.unsafe(`insert into ${TABLE} (note) values ($1)`, [note]);
      await conn.unsafe(`prepare transaction '${id}'`);
      return () => conn.end();
    },
    count: async (note) =>
      (await pg.unsafe(`select count(*)::int as n from ${TABLE} where note = $1`, [note]))[0]!.n as number,
    admin: { run: (text) => pg.unsafe(text), end: () => pg.end() },
  });

  const m = servers().mariadb;
  const myOptions = { host: m.host, port: m.port, user: m.user, password: m.password, database: m.database };
  const maria = await mysql.createConnection(myOptions);
  await maria.query(`create table ${TABLE} (id int auto_increment primary key, note varchar(64) not null)`);
  targets.push({
    name: 'MariaDB',
    pool: mysqlAdapter.connect(configFor('mysql', m)),
    prepareHeld: async (id, note) => {
      const conn = await mysql.createConnection(myOptions);
      await conn.query(`XA START '${id}'`);
      await conn.query(`insert into ${TABLE} (note) values (?)`, [note]);
      await conn.query(`XA END '${id}'`);
      await conn.query(`XA PREPARE '${id}'`);
      const thread = conn.threadId;
      return async (settled) => {
        // As the adapter does once its transaction is prepared: the socket is dropped.
        conn.destroy();
        while (settled) {
          const [rows] = await maria.query<mysql.RowDataPacket[]>(
            'select count(*) as n from information_schema.PROCESSLIST where ID = ?',
            [thread],
          );
          if (Number(rows[0]!.n) === 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      };
    },
    count: async (note) => {
      const [rows] = await maria.query<mysql.RowDataPacket[]>(
        `select count(*) as n from ${TABLE} where note = ?`,
        [note],
      );
      return Number(rows[0]!.n);
    },
    admin: { run: (text) => maria.query(text), end: () => maria.end() },
  });
});

afterAll(async () => {
  for (const t of targets) {
    // Whatever a failed case left prepared holds locks the drop would wait for.
    for (const prefix of prefixes)
      for (const id of await t.pool.sessions!.prepared(prefix)) await t.pool.sessions!.finish(id, false);
    await t.admin.run(`drop table if exists ${TABLE}`);
    await t.admin.end();
    await t.pool.close();
  }
  await sql?.end();
  await store?.drop();
});

function step(): Omit<StepAttempt, 'attempt'> {
  const key = { runId: newId('run'), stepId: newId('wfs') };
  prefixes.push(stepTagPrefix(key));
  return key;
}

describe.each(['PostgreSQL', 'MariaDB'])('a write step on %s', (name) => {
  const target = () => targets.find((t) => t.name === name)!;

  it('commits a transaction whose preparing session the server has not yet seen end', async () => {
    const { pool, prepareHeld, count } = target();
    const key = { ...step(), attempt: 1 };
    const note = `held-${newId('db').slice(-10)}`;
    const outcome = await runStepAttempt(sql, pool, key, true, async (session) => {
      const close = await prepareHeld(session.prepareAs!, note);
      // The server notices the client gone a while after its transaction was prepared.
      setTimeout(() => void close(false), 300);
      return INSERTED;
    });
    expect(outcome.delivery).toBe('exactly_once');
    expect(await count(note)).toBe(1);
    expect(await pool.sessions!.prepared(stepTagPrefix(key))).toEqual([]);
  });

  it('an older attempt that sweeps late leaves the newer attempt’s prepared transaction alone', async () => {
    const { pool, prepareHeld, count } = target();
    const base = step();
    const notes = { first: `old-${newId('db').slice(-10)}`, second: `new-${newId('db').slice(-10)}` };
    let atSweep!: () => void;
    const swept = new Promise<void>((r) => (atSweep = r));
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    let atExec!: () => void;
    const firstRuns = new Promise<void>((r) => (atExec = r));
    // Attempt 1 has claimed the step and pauses just before it lists prepared transactions.
    const sessions = pool.sessions!;
    const late: AdapterPool = Object.assign(Object.create(pool) as AdapterPool, {
      sessions: {
        ...sessions,
        prepared: async (prefix: string) => {
          atSweep();
          await gate;
          return sessions.prepared(prefix);
        },
      },
    });
    const first = runStepAttempt(sql, late, { ...base, attempt: 1 }, true, async (session) => {
      atExec();
      await (await prepareHeld(session.prepareAs!, notes.first))(true);
      return INSERTED;
    });
    first.catch(() => {});
    await swept;
    // Attempt 2 claims, prepares, and only then lets attempt 1 sweep; it decides once 1 swept.
    const second = await runStepAttempt(sql, pool, { ...base, attempt: 2 }, true, async (session) => {
      await (await prepareHeld(session.prepareAs!, notes.second))(true);
      openGate();
      await firstRuns;
      return INSERTED;
    });
    await expect(first).rejects.toThrow('a later attempt of this step took over');
    expect(second.delivery).toBe('exactly_once');
    expect({ first: await count(notes.first), second: await count(notes.second) }).toEqual({
      first: 0,
      second: 1,
    });
    expect(await pool.sessions!.prepared(stepTagPrefix(base))).toEqual([]);
  });
});

describe('settling an XA transaction on MariaDB', () => {
  it('waits for the session that prepared it to end, then commits it', async () => {
    const { pool, prepareHeld, count } = targets.find((t) => t.name === 'MariaDB')!;
    const id = `${stepTagPrefix(step())}1`;
    const note = `xa-${newId('db').slice(-10)}`;
    const close = await prepareHeld(id, note);
    setTimeout(() => void close(false), 300);
    expect(await pool.sessions!.finish(id, true)).toBe(true);
    expect(await count(note)).toBe(1);
    expect(await pool.sessions!.finish(id, true)).toBe(false);
  });

  it('says "not prepared" at once for an id nobody prepared', async () => {
    const { pool } = targets.find((t) => t.name === 'MariaDB')!;
    const started = Date.now();
    expect(await pool.sessions!.finish(`${stepTagPrefix(step())}1`, false)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
