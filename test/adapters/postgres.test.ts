// The Postgres adapter against the harness PostgreSQL (TLS with the harness CA, cert-only user).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPoolRegistry } from '../../adapters/index.ts';
import { postgresAdapter } from '../../adapters/postgres.ts';
import type { AdapterPool, ConnectionConfig, SslSettings } from '../../adapters/types.ts';
import { servers } from '../harness/servers.ts';
import {
  configFor,
  expectNoSecrets,
  rejection,
  sslCases,
  UNTRUSTED,
  WRONG_NAME,
  withPool,
} from './configs.ts';

const pg = () => servers().postgres;
const config = (ssl: Partial<SslSettings> = {}, over: Partial<ConnectionConfig> = {}) =>
  configFor('postgres', pg(), ssl, over);
const OPTS = { maxRows: 100, timeoutSeconds: 5 };
const TLS_STATE = 'select ssl, version from pg_stat_ssl where pid = pg_backend_pid()';

describe('postgres check-connection', () => {
  it('ok with the right password', async () => {
    await withPool(postgresAdapter.connect(config()), (p) => p.check());
  });

  it("a wrong password gives the server's own message, without the password", async () => {
    const err = await withPool(
      postgresAdapter.connect(config({}, { password: 'not-the-password-42' })),
      (p) => rejection(p.check()),
    );
    expect(err.kind).toBe('connection');
    expect(err.code).toBe('28P01');
    expect(err.message).toBe(`password authentication failed for user "${pg().user}"`);
    expectNoSecrets(err.message, pg(), 'not-the-password-42');
  });

  it('an unreadable client key fails without the key or certificate in the message', async () => {
    const key =
      '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n';
    const cfg = config({ ...sslCases(pg()).clientCert, clientKey: key });
    const err = await withPool(postgresAdapter.connect(cfg), (p) => rejection(p.check()));
    expect(err.message).not.toContain('MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj');
    expectNoSecrets(err.message, pg());
  });
});

describe('postgres SSL (SPEC.md 2.2)', () => {
  const tlsState = (p: AdapterPool) => p.execute(TLS_STATE, [], OPTS).then((r) => r.rows[0]);

  it('ssl off: a plain connection', async () => {
    expect(await withPool(postgresAdapter.connect(config()), tlsState)).toEqual([false, null]);
  });

  it('ssl without a CA: encrypted, not verified (the harness CA is unknown to Node)', async () => {
    const row = await withPool(postgresAdapter.connect(config(sslCases(pg()).encryptOnly)), tlsState);
    expect(row?.[0]).toBe(true);
    expect(row?.[1]).toMatch(/^TLSv1\.[23]$/);
  });

  it('a CA verifies the chain, not the name: the wrong hostname still connects', async () => {
    const cfg = config(sslCases(pg()).verifyCa, { hostname: pg().tls.wrongHostname });
    expect((await withPool(postgresAdapter.connect(cfg), tlsState))?.[0]).toBe(true);
  });

  it('verify_server_hostname: the right hostname connects', async () => {
    const cfg = config(sslCases(pg()).verifyFull, { hostname: pg().tls.rightHostname });
    expect((await withPool(postgresAdapter.connect(cfg), tlsState))?.[0]).toBe(true);
  });

  it('verify_server_hostname: a name the certificate does not carry fails', async () => {
    const cfg = config(sslCases(pg()).verifyFull, { hostname: pg().tls.wrongHostname });
    const err = await withPool(postgresAdapter.connect(cfg), (p) => rejection(p.check()));
    expect(err.kind).toBe('connection');
    expect(err.message).toMatch(WRONG_NAME);
  });

  it('a CA that did not sign the server certificate fails', async () => {
    const err = await withPool(postgresAdapter.connect(config(sslCases(pg()).otherCa)), (p) =>
      rejection(p.check()),
    );
    expect(err.kind).toBe('connection');
    expect(err.message).toMatch(UNTRUSTED);
    expectNoSecrets(err.message, pg());
  });

  it('a dial address carries TCP only: TLS still verifies the configured hostname', async () => {
    const dial = { host: pg().host, port: pg().port };
    const right = config(sslCases(pg()).verifyFull, { hostname: pg().tls.rightHostname, port: 1, dial });
    expect((await withPool(postgresAdapter.connect(right), tlsState))?.[0]).toBe(true);
    const wrong = config(sslCases(pg()).verifyFull, { hostname: 'db.invalid', port: 1, dial });
    const err = await withPool(postgresAdapter.connect(wrong), (p) => rejection(p.check()));
    expect(err.message).toMatch(WRONG_NAME);
  });

  it('a client certificate logs in as the certificate user, without a password', async () => {
    const cfg = config(sslCases(pg()).clientCert, {
      username: pg().certUser,
      password: '',
      hostname: pg().tls.rightHostname,
    });
    await withPool(postgresAdapter.connect(cfg), async (p) => {
      await p.check();
      expect((await p.execute('select current_user', [], OPTS)).rows).toEqual([[pg().certUser]]);
    });
  });

  it('the certificate user cannot log in without the certificate', async () => {
    const cfg = config(sslCases(pg()).verifyCa, { username: pg().certUser, password: '' });
    const err = await withPool(postgresAdapter.connect(cfg), (p) => rejection(p.check()));
    expect(err.kind).toBe('connection');
  });
});

describe('postgres execute', () => {
  let pool: AdapterPool;
  beforeAll(async () => {
    pool = postgresAdapter.connect(config());
    await pool.execute('drop table if exists adapter_pg_t', [], OPTS);
    await pool.execute(
      'create table adapter_pg_t (id serial primary key, name text not null, amount numeric(10,2), at timestamptz)',
      [],
      OPTS,
    );
  });
  afterAll(async () => {
    await pool.execute('drop table if exists adapter_pg_t', [], OPTS);
    await pool.close();
  });

  it('binds hostile strings as data', async () => {
    const hostile = "'; drop table adapter_pg_t; --";
    const ins = await pool.execute(
      'insert into adapter_pg_t (name) values ($1) returning name',
      [hostile],
      OPTS,
    );
    expect(ins.rows).toEqual([[hostile]]);
    const sel = await pool.execute('select count(*) from adapter_pg_t where name = $1', [hostile], OPTS);
    expect(sel.rows).toEqual([['1']]);
  });

  it('reports the command tag and the affected rows of INSERT and UPDATE', async () => {
    const ins = await pool.execute(
      'insert into adapter_pg_t (name, amount) values ($1, $2), ($3, $4)',
      ['a', '1.10', 'b', '2.25'],
      OPTS,
    );
    expect(ins).toMatchObject({ command: 'INSERT', num_rows: 2, columns: [], rows: [] });
    const upd = await pool.execute(
      "update adapter_pg_t set amount = amount * 2 where name in ('a', 'b')",
      [],
      OPTS,
    );
    expect(upd).toMatchObject({ command: 'UPDATE', num_rows: 2 });
    const sel = await pool.execute(
      "select name, amount from adapter_pg_t where name in ('a', 'b') order by name",
      [],
      OPTS,
    );
    expect(sel).toMatchObject({
      command: 'SELECT',
      num_rows: 2,
      rows: [
        ['a', '2.20'],
        ['b', '4.50'],
      ],
    });
  });

  it('maps values: int8 and numeric as strings, dates as ISO text, bytea as base64', async () => {
    const r = await pool.execute(
      "select 9007199254740993::int8, 1.5::numeric, '2024-01-02'::date, '2024-01-02 03:04:05.123456'::timestamp, $1::timestamptz, '\\xdeadbeef'::bytea, '{\"a\":[1]}'::jsonb, array[1,2], 'NaN'::float8",
      [new Date('2024-01-02T03:04:05.678Z')],
      OPTS,
    );
    expect(r.rows[0]).toEqual([
      '9007199254740993',
      '1.5',
      '2024-01-02',
      '2024-01-02T03:04:05.123456',
      '2024-01-02T03:04:05.678Z',
      '3q2+7w==',
      { a: [1] },
      [1, 2],
      'NaN',
    ]);
  });

  it("parses arrays of the server's own types, not only the built-in ones", async () => {
    const r = await pool.execute(
      "select array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, null], array['(1,2)'::point], array[true, false]",
      [],
      OPTS,
    );
    expect(r.rows[0]).toEqual([['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', null], ['(1,2)'], [true, false]]);
  });

  it('a statement takes one round trip, capped or not: one write to the server, one answer', async () => {
    // Parse/Bind/Describe/Execute(limit)/Sync go in one write. A driver's cursor (postgres.js,
    // pg-cursor) sends Flush there and a second message after the first answer: two writes.
    const proxy = await countingProxy(pg().host, pg().port);
    const counted = postgresAdapter.connect(config({}, { dial: { host: '127.0.0.1', port: proxy.port } }));
    try {
      await counted.execute('select 1', [], OPTS); // connects, reads the server's types
      for (const [sql, maxRows] of [
        ['select g from generate_series(1, 10) g', 100],
        ['select g from generate_series(1, 10) g', 2],
        ["select $1::text || 'x'", 100],
      ] as const) {
        proxy.writes = 0;
        const r = await counted.execute(sql, sql.includes('$1') ? ['a'] : [], { maxRows, timeoutSeconds: 5 });
        expect(r.num_rows).toBe(Math.min(maxRows, sql.includes('$1') ? 1 : 10));
        expect(proxy.writes).toBe(1);
      }
    } finally {
      await counted.close();
      proxy.close();
    }
  });

  it('a connection the server ended between statements is opened again for the next one', async () => {
    const [pid] = (await pool.execute('select pg_backend_pid()', [], OPTS)).rows[0] as [number];
    const killer = postgresAdapter.connect(config());
    try {
      await killer.execute('select pg_terminate_backend($1)', [pid], OPTS);
    } finally {
      await killer.close();
    }
    await new Promise((r) => setTimeout(r, 200));
    const again = await pool.execute('select pg_backend_pid()', [], OPTS);
    expect(again.rows[0]).not.toEqual([pid]);
  });

  it('caps rows without reading the rest, and says so', async () => {
    const r = await pool.execute('select g from generate_series(1, 1000000) g', [], {
      maxRows: 3,
      timeoutSeconds: 5,
    });
    expect(r).toMatchObject({ rows: [[1], [2], [3]], num_rows: 3, truncated: true, command: 'SELECT' });
    const exact = await pool.execute('select g from generate_series(1, 3) g', [], {
      maxRows: 3,
      timeoutSeconds: 5,
    });
    expect(exact.truncated).toBe(false);
  });

  it('stops a statement at its time limit with a clear error, and the pool stays usable', async () => {
    const started = Date.now();
    const err = await rejection(pool.execute('select pg_sleep(5)', [], { maxRows: 1, timeoutSeconds: 1 }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/^statement timed out after 1 s/);
    expect((await pool.execute('select 1', [], OPTS)).rows).toEqual([[1]]);
  });

  it('a statement stopped at its limit never cancels the next one on the same connection', async () => {
    // A late CancelRequest would hit whatever runs next; statement_timeout cannot.
    for (let i = 0; i < 5; i++) {
      await rejection(pool.execute('select pg_sleep(5)', [], { maxRows: 1, timeoutSeconds: 0.3 }));
      expect((await pool.execute('select pg_sleep(0.2), 1', [], OPTS)).rows).toEqual([['', 1]]);
    }
  });

  it('returns the NOTICEs of its own statement only, even with statements running beside it', async () => {
    const noisy = pool.execute(
      "do $$ begin perform pg_sleep(0.2); raise notice 'from the noisy one'; end $$",
      [],
      OPTS,
    );
    const quiet = pool.execute('select pg_sleep(0.3)', [], OPTS);
    expect((await noisy).messages).toEqual(['NOTICE: from the noisy one']);
    expect((await quiet).messages).toEqual([]);
  });

  it('reports the source table and column of each result column, whatever its alias', async () => {
    const r = await pool.execute(
      'select name as harmless, 1 as computed, a.attnum from adapter_pg_t, pg_attribute a limit 1',
      [],
      OPTS,
    );
    const [oid] = (await pool.execute("select 'adapter_pg_t'::regclass::oid", [], OPTS)).rows[0] as [number];
    expect(r.columnSources?.[0]).toEqual({ tableOid: oid, columnNumber: 2 });
    expect(r.columnSources?.[1]).toBeNull();
  });

  it('a server error keeps its SQLSTATE and message', async () => {
    const err = await rejection(pool.execute('select * from no_such_table', [], OPTS));
    expect(err).toMatchObject({
      kind: 'query',
      code: '42P01',
      message: 'relation "no_such_table" does not exist',
    });
  });

  it('readSchema lists a created table with its columns and types', async () => {
    const tables = await pool.readSchema();
    const t = tables.find((x) => x.schema === 'public' && x.name === 'adapter_pg_t');
    expect(t).toEqual({
      schema: 'public',
      name: 'adapter_pg_t',
      kind: 'table',
      columns: [
        { name: 'id', type: 'integer', nullable: false },
        { name: 'name', type: 'text', nullable: false },
        { name: 'amount', type: 'numeric(10,2)', nullable: true },
        { name: 'at', type: 'timestamp with time zone', nullable: true },
      ],
    });
  });

  it('SELECTs answered before their connection is ready again each get their own answer', async () => {
    // A SELECT's answer returns at CommandComplete, before ReadyForQuery: far more statements
    // than the pool has connections, side by side and back to back, must not mix their replies.
    const n = 400;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        pool.execute('select $1::int as i, pg_backend_pid() as pid', [i], OPTS),
      ),
    );
    expect(results.map((r) => r.rows[0]![0])).toEqual(Array.from({ length: n }, (_, i) => i));
    for (let i = 0; i < 100; i++) {
      const r = await pool.execute('select $1::text as v', [`v${i}`], OPTS);
      expect(r.rows).toEqual([[`v${i}`]]);
    }
  });

  it('a write answers only once committed: another connection sees it at once', async () => {
    const other = postgresAdapter.connect(config());
    try {
      for (let i = 0; i < 20; i++) {
        const ins = await pool.execute(
          'insert into adapter_pg_t (name) values ($1) returning id',
          [`c${i}`],
          OPTS,
        );
        expect(ins.command).toBe('INSERT');
        const seen = await other.execute(
          'select count(*) from adapter_pg_t where name = $1',
          [`c${i}`],
          OPTS,
        );
        expect(seen.rows).toEqual([['1']]);
      }
    } finally {
      await other.close();
    }
  });

  it('a BEGIN left open does not leak into the next statement on the pool', async () => {
    await pool.execute('begin', [], OPTS);
    await pool.execute("insert into adapter_pg_t (name) values ('after-begin')", [], OPTS);
    // Committed, so another connection sees it: the insert did not run inside the open transaction.
    const other = postgresAdapter.connect(config());
    const seen = await withPool(other, (p) =>
      p.execute("select count(*) from adapter_pg_t where name = 'after-begin'", [], OPTS),
    );
    expect(seen.rows).toEqual([['1']]);
  });
});

describe('postgres read-only statements (begin read only … commit, one round trip)', () => {
  const RO = { ...OPTS, readOnly: true };
  let pool: AdapterPool;
  beforeAll(async () => {
    // One connection, so every statement below meets what the one before it left behind.
    pool = postgresAdapter.connect(config());
    await pool.execute('drop table if exists adapter_pg_ro', [], OPTS);
    await pool.execute('create table adapter_pg_ro (v text)', [], OPTS);
    await pool.execute(
      `create or replace function adapter_pg_ro_write() returns int language sql as
         $$ insert into adapter_pg_ro values ('w') returning 1 $$`,
      [],
      OPTS,
    );
  });
  afterAll(async () => {
    await pool.execute('drop function if exists adapter_pg_ro_write()', [], OPTS);
    await pool.execute('drop table if exists adapter_pg_ro', [], OPTS);
    await pool.close();
  });

  it('reads in a read-only transaction, with the command tag of the statement itself', async () => {
    const r = await pool.execute(
      "select $1::text as v, current_setting('transaction_read_only') as ro",
      ['x'],
      RO,
    );
    expect(r).toMatchObject({ columns: ['v', 'ro'], rows: [['x', 'on']], command: 'SELECT', num_rows: 1 });
    expect(r.messages).toEqual([]);
  });

  it('caps rows inside the transaction', async () => {
    const r = await pool.execute('select generate_series(1, 10) as n', [], { ...RO, maxRows: 3 });
    expect(r).toMatchObject({ rows: [[1], [2], [3]], truncated: true });
  });

  it('refuses writes, direct or through a function, with 25006, and nothing changes', async () => {
    for (const write of [
      "insert into adapter_pg_ro values ('w')",
      'select adapter_pg_ro_write()',
      'create table adapter_pg_ro2 (v int)',
      'drop table adapter_pg_ro',
    ]) {
      const err = await rejection(pool.execute(write, [], RO));
      expect(err.code, write).toBe('25006');
    }
    const count = await pool.execute('select count(*)::int from adapter_pg_ro', [], OPTS);
    expect(count.rows).toEqual([[0]]);
  });

  it('leaves no transaction behind: ordinary statements after a failed read-only one commit', async () => {
    await rejection(pool.execute("insert into adapter_pg_ro values ('w')", [], RO));
    for (let i = 0; i < 6; i++) await pool.execute("insert into adapter_pg_ro values ('ok')", [], OPTS);
    for (let i = 0; i < 6; i++) await pool.execute('select 1', [], RO);
    const r = await pool.execute(
      "select count(*)::int, current_setting('transaction_read_only') from adapter_pg_ro",
      [],
      OPTS,
    );
    expect(r.rows).toEqual([[6, 'off']]);
  });
});

describe('postgres connections that fail', () => {
  it('a pool closed while its connection is being opened fails the statement at once', async () => {
    // A server that accepts and never answers: the statement waits in the connect.
    const hole = createServer(() => {});
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    const port = (hole.address() as { port: number }).port;
    const pool = postgresAdapter.connect(config({}, { dial: { host: '127.0.0.1', port } }));
    try {
      const started = Date.now();
      const pending = rejection(pool.execute('select 1', [], { maxRows: 1, timeoutSeconds: 30 }));
      await new Promise((r) => setTimeout(r, 200));
      await pool.close();
      await pending;
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      hole.close();
    }
  });

  it('a statement whose connection the server ends fails as a connection error; the next one runs', async () => {
    const pool = postgresAdapter.connect(config());
    const killer = postgresAdapter.connect(config());
    try {
      await pool.execute('select 1', [], OPTS);
      const sleeping = rejection(pool.execute('select pg_sleep(5) as cs_kill_me', [], OPTS));
      await new Promise((r) => setTimeout(r, 300));
      const killed = await killer.execute(
        "select pg_terminate_backend(pid) from pg_stat_activity where query like '%cs_kill_me%' and pid <> pg_backend_pid()",
        [],
        OPTS,
      );
      expect(killed.rows).toEqual([[true]]);
      const err = await sleeping;
      expect(err).toMatchObject({ kind: 'connection', code: '57P01' });
      // At once, on the same pool: no statement inherits the ended connection.
      expect((await pool.execute('select 2', [], OPTS)).rows).toEqual([[2]]);
    } finally {
      await pool.close();
      await killer.close();
    }
  });

  it('a connection lost without a word from the server is a connection error', async () => {
    const proxy = await countingProxy(pg().host, pg().port);
    const pool = postgresAdapter.connect(config({}, { dial: { host: '127.0.0.1', port: proxy.port } }));
    try {
      await pool.execute('select 1', [], OPTS);
      const sleeping = rejection(pool.execute('select pg_sleep(5)', [], OPTS));
      await new Promise((r) => setTimeout(r, 200));
      proxy.close();
      expect(await sleeping).toMatchObject({ kind: 'connection', code: 'CONNECTION_CLOSED' });
    } finally {
      await pool.close();
    }
  });

  it('takes no session options from the environment ($PGOPTIONS)', async () => {
    const before = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c search_path=cs_from_the_environment';
    const pool = postgresAdapter.connect(config());
    try {
      const r = await pool.execute('show search_path', [], OPTS);
      expect(r.rows).toEqual([['"$user", public']]);
    } finally {
      if (before === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = before;
      await pool.close();
    }
  });

  it('a parameter that cannot be sent fails its statement only; the connection goes on', async () => {
    const pool = postgresAdapter.connect(config());
    try {
      await pool.execute('select 1', [], OPTS);
      const err = await rejection(pool.execute('select $1::timestamptz', [new Date(Number.NaN)], OPTS));
      expect(err.kind).toBe('query');
      const started = Date.now();
      expect((await pool.execute('select 3', [], OPTS)).rows).toEqual([[3]]);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await pool.close();
    }
  });

  it('COPY FROM STDIN is refused with the reason, and the pool goes on', async () => {
    const pool = postgresAdapter.connect(config());
    try {
      await pool.execute('create table if not exists adapter_pg_copy (x int)', [], OPTS);
      const err = await rejection(pool.execute('copy adapter_pg_copy from stdin', [], OPTS));
      expect(err.message).toMatch(/COPY FROM STDIN is not supported here/);
      const started = Date.now();
      expect((await pool.execute('select 4', [], OPTS)).rows).toEqual([[4]]);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await pool.execute('drop table if exists adapter_pg_copy', [], OPTS).catch(() => {});
      await pool.close();
    }
  });
});

describe('postgres pools through the registry', () => {
  it('gives a new pool after a version change and closes the old one', async () => {
    const registry = createPoolRegistry();
    const key = { databaseId: 'db_pg', credentialId: 'crd_pg', version: 'v1' };
    const first = registry.acquire(key, () => config());
    await first.execute('select 1', [], OPTS);
    expect(registry.acquire({ ...key }, () => config())).toBe(first);
    const second = registry.acquire({ ...key, version: 'v2' }, () => config());
    expect(second).not.toBe(first);
    expect((await second.execute('select 2', [], OPTS)).rows).toEqual([[2]]);
    await registry.invalidate('db_pg');
    const err = await rejection(first.execute('select 1', [], OPTS));
    expect(err.message).toMatch(/closed/);
    await registry.closeAll();
  });
});

/** A TCP proxy to the server that counts what the client writes (TLS records included). */
async function countingProxy(
  host: string,
  port: number,
): Promise<{ port: number; writes: number; close(): void }> {
  const sockets = new Set<Socket>();
  const proxy = { port: 0, writes: 0, close: () => {} };
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      proxy.writes++;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.port = (server.address() as { port: number }).port;
  proxy.close = () => {
    for (const s of sockets) s.destroy();
    server.close();
  };
  return proxy;
}
