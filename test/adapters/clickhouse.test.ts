// The ClickHouse adapter against the harness ClickHouse. Debian ships 18.16, which knows neither
// server-side query parameters nor output_format_json_quote_decimals: these tests run what that
// server supports and pin what it refuses; adapters/README.md lists what was not run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseAdapter } from '../../adapters/clickhouse.ts';
import type { AdapterPool, ConnectionConfig } from '../../adapters/types.ts';
import { servers } from '../harness/servers.ts';
import { rejection, SSL_OFF, withPool } from './configs.ts';

const ch = () => servers().clickhouse;
const config = (over: Partial<ConnectionConfig> = {}): ConnectionConfig => ({
  adapter: 'clickhouse',
  hostname: ch().host,
  port: ch().httpPort,
  database: ch().database,
  username: ch().user,
  password: ch().password,
  ssl: SSL_OFF,
  timeoutSeconds: 5,
  ...over,
});
const OPTS = { maxRows: 100, timeoutSeconds: 5 };
const major = () => Number(ch().version.split('.')[0]);

describe('clickhouse check-connection', () => {
  it('ok with the right password', async () => {
    await withPool(clickhouseAdapter.connect(config()), (p) => p.check());
  });

  it("a wrong password gives the server's own message, without the password", async () => {
    const err = await withPool(clickhouseAdapter.connect(config({ password: 'not-the-password-42' })), (p) =>
      rejection(p.check()),
    );
    expect(err.kind).toBe('connection');
    expect(err.code).toBe(major() >= 20 ? '516' : '193');
    expect(err.message).toMatch(
      new RegExp(
        `Code: (193|516)[.,].*(Wrong password for user ${ch().user}|${ch().user}: Authentication failed)`,
      ),
    );
    expect(err.message).not.toContain('not-the-password-42');
  });
});

describe('clickhouse execute', () => {
  let pool: AdapterPool;
  beforeAll(async () => {
    pool = clickhouseAdapter.connect(config());
    await pool.execute('DROP TABLE IF EXISTS adapter_ch_t', [], OPTS);
    await pool.execute(
      'CREATE TABLE adapter_ch_t (id Int32, name String, at DateTime, big Int64) ENGINE = Memory',
      [],
      OPTS,
    );
  });
  afterAll(async () => {
    await pool.execute('DROP TABLE IF EXISTS adapter_ch_t', [], OPTS);
    await pool.close();
  });

  it('values travel as query parameters, never in the text', async () => {
    const hostile = "'; DROP TABLE adapter_ch_t; --";
    if (major() < 19) {
      // 18.x predates query parameters: it refuses param_p1 as an unknown setting, which shows the
      // value was sent as a parameter and not spliced into the statement.
      const err = await rejection(pool.execute('SELECT {p1:String}', [hostile], OPTS));
      expect(err).toMatchObject({ kind: 'query', code: '115' });
      expect(err.message).toMatch(/Unknown setting param_p1/);
      return;
    }
    const r = await pool.execute('SELECT {p1:String} AS s, {p2:Int64} AS n', [hostile, 42], OPTS);
    expect(r.rows).toEqual([[hostile, '42']]);
  });

  it('derives the command of CREATE, INSERT and SELECT', async () => {
    const ins = await pool.execute(
      "INSERT INTO adapter_ch_t VALUES (1, 'a', toDateTime('2024-01-02 03:04:05'), 9007199254740993), (2, 'b', toDateTime('2024-01-02 03:04:05'), 2)",
      [],
      OPTS,
    );
    expect(ins).toMatchObject({ command: 'INSERT', columns: [], rows: [] });
    // Written rows come from the X-ClickHouse-Summary header, which 18.x does not send.
    expect(ins.num_rows).toBe(major() < 19 ? 0 : 2);
    const sel = await pool.execute('SELECT id, name, at, big FROM adapter_ch_t ORDER BY id', [], OPTS);
    expect(sel).toEqual({
      columns: ['id', 'name', 'at', 'big'],
      rows: [
        [1, 'a', '2024-01-02T03:04:05', '9007199254740993'],
        [2, 'b', '2024-01-02T03:04:05', '2'],
      ],
      command: 'SELECT',
      messages: [],
      num_rows: 2,
      truncated: false,
    });
  });

  it('maps values: 64-bit integers as strings, arrays as arrays, NaN as null (the server’s JSON)', async () => {
    const r = await pool.execute(
      "SELECT toUInt64(18446744073709551615), [1, 2], nan, toDate('2024-01-02'), toNullable(toDateTime('2024-01-02 03:04:05'))",
      [],
      OPTS,
    );
    expect(r.rows[0]).toEqual(['18446744073709551615', [1, 2], null, '2024-01-02', '2024-01-02T03:04:05']);
  });

  it('caps rows on the server (max_result_rows, break) and says so', async () => {
    const r = await pool.execute('SELECT number FROM system.numbers', [], { maxRows: 3, timeoutSeconds: 5 });
    expect(r).toMatchObject({ rows: [['0'], ['1'], ['2']], num_rows: 3, truncated: true });
    const exact = await pool.execute('SELECT number FROM system.numbers LIMIT 3', [], {
      maxRows: 3,
      timeoutSeconds: 5,
    });
    expect(exact.truncated).toBe(false);
  });

  it('stops a long statement at its time limit (max_execution_time) with a clear error', async () => {
    const started = Date.now();
    const err = await rejection(
      pool.execute('SELECT count() FROM numbers(100000000000)', [], { maxRows: 1, timeoutSeconds: 1 }),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/^statement timed out after 1 s .*Timeout exceeded/);
  });

  it('reports an exception raised after the first rows were sent', async () => {
    const err = await rejection(
      pool.execute('SELECT throwIf(number = 200000) FROM system.numbers LIMIT 300000', [], {
        maxRows: 1_000_000,
        timeoutSeconds: 5,
      }),
    );
    expect(err).toMatchObject({ kind: 'query', code: '395' });
  });

  it('a server error keeps its code and message', async () => {
    const err = await rejection(pool.execute('SELECT * FROM no_such_table', [], OPTS));
    expect(err).toMatchObject({ kind: 'query', code: '60' });
    expect(err.message).toMatch(/Table .*no_such_table doesn't exist/);
  });

  it('readSchema lists a created table with its columns and types', async () => {
    const t = (await pool.readSchema()).find((x) => x.name === 'adapter_ch_t');
    expect(t).toEqual({
      schema: ch().database,
      name: 'adapter_ch_t',
      kind: 'table',
      columns: [
        { name: 'id', type: 'Int32', nullable: false },
        { name: 'name', type: 'String', nullable: false },
        { name: 'at', type: 'DateTime', nullable: false },
        { name: 'big', type: 'Int64', nullable: false },
      ],
    });
  });
});

describe('clickhouse read-only statements (readonly=1)', () => {
  const RO = { ...OPTS, readOnly: true };
  let pool: AdapterPool;
  beforeAll(async () => {
    pool = clickhouseAdapter.connect(config());
    await pool.execute('DROP TABLE IF EXISTS adapter_ch_ro', [], OPTS);
    await pool.execute('CREATE TABLE adapter_ch_ro (v String) ENGINE = Memory', [], OPTS);
  });
  afterAll(async () => {
    await pool.execute('DROP TABLE IF EXISTS adapter_ch_ro', [], OPTS);
    await pool.close();
  });

  it('reads, with the row cap and time limit still applied', async () => {
    const r = await pool.execute('SELECT number FROM system.numbers LIMIT 5', [], { ...RO, maxRows: 2 });
    expect(r).toMatchObject({ rows: [['0'], ['1']], truncated: true });
  });

  it('refuses a write, DDL and lifting the setting from the statement, and nothing changes', async () => {
    for (const write of [
      "INSERT INTO adapter_ch_ro VALUES ('w')",
      'DROP TABLE adapter_ch_ro',
      'SELECT 1 SETTINGS readonly = 0',
    ]) {
      const err = await rejection(pool.execute(write, [], RO));
      expect(err.code, write).toBe('164');
    }
    expect((await pool.execute('SELECT count() FROM adapter_ch_ro', [], OPTS)).rows).toEqual([['0']]);
  });
});
