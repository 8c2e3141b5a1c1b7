// The MySQL adapter against the harness MariaDB (TLS with the harness CA, REQUIRE X509 user).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlAdapter } from '../../adapters/mysql.ts';
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

const my = () => servers().mariadb;
const config = (ssl: Partial<SslSettings> = {}, over: Partial<ConnectionConfig> = {}) =>
  configFor('mysql', my(), ssl, over);
const OPTS = { maxRows: 100, timeoutSeconds: 5 };

describe('mysql check-connection', () => {
  it('ok with the right password', async () => {
    await withPool(mysqlAdapter.connect(config()), (p) => p.check());
  });

  it("a wrong password gives the server's own message, without the password", async () => {
    const err = await withPool(mysqlAdapter.connect(config({}, { password: 'not-the-password-42' })), (p) =>
      rejection(p.check()),
    );
    expect(err.kind).toBe('connection');
    expect(err.code).toBe('ER_ACCESS_DENIED_ERROR');
    expect(err.message).toBe(`Access denied for user '${my().user}'@'127.0.0.1' (using password: YES)`);
    expectNoSecrets(err.message, my(), 'not-the-password-42');
  });
});

describe('mysql SSL (SPEC.md 2.2)', () => {
  const cipher = (p: AdapterPool) =>
    p.execute("SHOW STATUS LIKE 'Ssl_cipher'", [], OPTS).then((r) => r.rows[0]?.[1]);

  it('ssl off: a plain connection', async () => {
    expect(await withPool(mysqlAdapter.connect(config()), cipher)).toBe('');
  });

  it('ssl without a CA: encrypted, not verified', async () => {
    expect(await withPool(mysqlAdapter.connect(config(sslCases(my()).encryptOnly)), cipher)).not.toBe('');
  });

  it('a CA verifies the chain, not the name: the wrong hostname still connects', async () => {
    const cfg = config(sslCases(my()).verifyCa, { hostname: my().tls.wrongHostname });
    expect(await withPool(mysqlAdapter.connect(cfg), cipher)).not.toBe('');
  });

  it('verify_server_hostname: the right hostname connects', async () => {
    const cfg = config(sslCases(my()).verifyFull, { hostname: my().tls.rightHostname });
    expect(await withPool(mysqlAdapter.connect(cfg), cipher)).not.toBe('');
  });

  it('verify_server_hostname: a name the certificate does not carry fails', async () => {
    const cfg = config(sslCases(my()).verifyFull, { hostname: my().tls.wrongHostname });
    const err = await withPool(mysqlAdapter.connect(cfg), (p) => rejection(p.check()));
    expect(err.kind).toBe('connection');
    expect(err.message).toMatch(WRONG_NAME);
  });

  it('a CA that did not sign the server certificate fails', async () => {
    const err = await withPool(mysqlAdapter.connect(config(sslCases(my()).otherCa)), (p) =>
      rejection(p.check()),
    );
    expect(err.kind).toBe('connection');
    expect(err.message).toMatch(UNTRUSTED);
    expectNoSecrets(err.message, my());
  });

  it('a dial address carries TCP only: TLS still verifies the configured hostname', async () => {
    const dial = { host: my().host, port: my().port };
    const right = config(sslCases(my()).verifyFull, { hostname: my().tls.rightHostname, port: 1, dial });
    expect(await withPool(mysqlAdapter.connect(right), cipher)).not.toBe('');
    const wrong = config(sslCases(my()).verifyFull, { hostname: 'db.invalid', port: 1, dial });
    const err = await withPool(mysqlAdapter.connect(wrong), (p) => rejection(p.check()));
    expect(err.message).toMatch(WRONG_NAME);
  });

  it('a client certificate logs in as the certificate user, without a password', async () => {
    const cfg = config(sslCases(my()).clientCert, {
      username: my().certUser,
      password: '',
      hostname: my().tls.rightHostname,
    });
    await withPool(mysqlAdapter.connect(cfg), async (p) => {
      await p.check();
      const r = await p.execute('SELECT CURRENT_USER()', [], OPTS);
      expect(String(r.rows[0]?.[0])).toMatch(new RegExp(`^${my().certUser}@`));
    });
  });

  it('the certificate user cannot log in without the certificate', async () => {
    const cfg = config(sslCases(my()).verifyCa, { username: my().certUser, password: '' });
    const err = await withPool(mysqlAdapter.connect(cfg), (p) => rejection(p.check()));
    expect(err.kind).toBe('connection');
  });
});

describe('mysql execute', () => {
  let pool: AdapterPool;
  beforeAll(async () => {
    pool = mysqlAdapter.connect(config());
    await pool.execute('DROP TABLE IF EXISTS adapter_my_t', [], OPTS);
    await pool.execute(
      'CREATE TABLE adapter_my_t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, amount DECIMAL(10,2), at DATETIME(3))',
      [],
      OPTS,
    );
  });
  afterAll(async () => {
    await pool.execute('DROP TABLE IF EXISTS adapter_my_t', [], OPTS);
    await pool.close();
  });

  it('binds hostile strings as data (server-side prepared statement)', async () => {
    const hostile = "'; DROP TABLE adapter_my_t; --";
    await pool.execute('INSERT INTO adapter_my_t (name) VALUES (?)', [hostile], OPTS);
    const r = await pool.execute('SELECT name FROM adapter_my_t WHERE name = ?', [hostile], OPTS);
    expect(r.rows).toEqual([[hostile]]);
  });

  it('derives the command and reports affected rows of INSERT and UPDATE', async () => {
    const ins = await pool.execute(
      'INSERT INTO adapter_my_t (name, amount, at) VALUES (?, ?, ?), (?, ?, ?)',
      ['a', '1.10', new Date('2024-05-06T07:08:09.123Z'), 'b', 2.25, null],
      OPTS,
    );
    expect(ins).toMatchObject({ command: 'INSERT', num_rows: 2, columns: [], rows: [] });
    const upd = await pool.execute(
      "UPDATE adapter_my_t SET amount = amount * 2 WHERE name IN ('a', 'b')",
      [],
      OPTS,
    );
    expect(upd).toMatchObject({ command: 'UPDATE', num_rows: 2 });
    const sel = await pool.execute(
      "SELECT name, amount, at FROM adapter_my_t WHERE name IN ('a', 'b') ORDER BY name",
      [],
      OPTS,
    );
    expect(sel).toMatchObject({
      command: 'SELECT',
      num_rows: 2,
      rows: [
        ['a', '2.20', '2024-05-06T07:08:09.123'],
        ['b', '4.50', null],
      ],
    });
  });

  it('maps values: BIGINT and DECIMAL as strings, bytes as base64', async () => {
    const r = await pool.execute(
      "SELECT CAST(9007199254740993 AS SIGNED), CAST(1.5 AS DECIMAL(4,2)), X'DEADBEEF', 1.5e0, DATE('2024-01-02')",
      [],
      OPTS,
    );
    expect(r.rows[0]).toEqual(['9007199254740993', '1.50', '3q2+7w==', 1.5, '2024-01-02']);
  });

  it('returns the warnings of a write', async () => {
    const r = await pool.execute('INSERT IGNORE INTO adapter_my_t (name) VALUES (?)', ['x'.repeat(60)], OPTS);
    expect(r.messages).toEqual(["Warning: Data truncated for column 'name' at row 1"]);
  });

  it('caps rows, says so, and the pool keeps working after the abandoned stream', async () => {
    const r = await pool.execute('SELECT seq FROM seq_1_to_1000000', [], { maxRows: 3, timeoutSeconds: 5 });
    expect(r).toMatchObject({ rows: [['1'], ['2'], ['3']], num_rows: 3, truncated: true });
    const exact = await pool.execute('SELECT seq FROM seq_1_to_3', [], { maxRows: 3, timeoutSeconds: 5 });
    expect(exact.truncated).toBe(false);
  });

  it('stops SLEEP(5) at a 1 s limit with a clear error, and the pool stays usable', async () => {
    const started = Date.now();
    const err = await rejection(pool.execute('SELECT SLEEP(5)', [], { maxRows: 1, timeoutSeconds: 1 }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/^statement timed out after 1 s/);
    expect((await pool.execute('SELECT 1', [], OPTS)).rows).toEqual([[1]]);
  });

  it('a server error keeps its code and message', async () => {
    const err = await rejection(pool.execute('SELECT * FROM no_such_table', [], OPTS));
    expect(err).toMatchObject({ kind: 'query', code: 'ER_NO_SUCH_TABLE' });
    expect(err.message).toMatch(/no_such_table' doesn't exist/);
  });

  it('readSchema lists a created table with its columns and types', async () => {
    const t = (await pool.readSchema()).find((x) => x.name === 'adapter_my_t');
    expect(t).toEqual({
      schema: my().database,
      name: 'adapter_my_t',
      kind: 'table',
      columns: [
        { name: 'id', type: 'int(11)', nullable: false },
        { name: 'name', type: 'varchar(40)', nullable: false },
        { name: 'amount', type: 'decimal(10,2)', nullable: true },
        { name: 'at', type: 'datetime(3)', nullable: true },
      ],
    });
  });

  it('a transaction left open does not leak into the next statement on the pool', async () => {
    await pool.execute('START TRANSACTION', [], OPTS);
    await pool.execute("INSERT INTO adapter_my_t (name) VALUES ('after-begin')", [], OPTS);
    const other = mysqlAdapter.connect(config());
    const seen = await withPool(other, (p) =>
      p.execute("SELECT COUNT(*) FROM adapter_my_t WHERE name = 'after-begin'", [], OPTS),
    );
    expect(seen.rows).toEqual([['1']]);
  });
});

describe('mysql read-only statements (SET SESSION TRANSACTION READ ONLY)', () => {
  const RO = { ...OPTS, readOnly: true };
  let pool: AdapterPool;
  beforeAll(async () => {
    pool = mysqlAdapter.connect(config());
    await pool.execute('DROP TABLE IF EXISTS adapter_my_ro', [], OPTS);
    await pool.execute('CREATE TABLE adapter_my_ro (v VARCHAR(20))', [], OPTS);
  });
  afterAll(async () => {
    await pool.execute('DROP TABLE IF EXISTS adapter_my_ro', [], OPTS);
    await pool.close();
  });

  it('reads', async () => {
    expect((await pool.execute('SELECT ? AS v', ['x'], RO)).rows).toEqual([['x']]);
  });

  it('refuses a write and DDL (DDL commits first, the session mode still holds), and nothing changes', async () => {
    for (const write of [
      "INSERT INTO adapter_my_ro VALUES ('w')",
      'CREATE TABLE adapter_my_ro2 (v INT)',
      'DROP TABLE adapter_my_ro',
    ]) {
      const err = await rejection(pool.execute(write, [], RO));
      expect(err.code, write).toBe('ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION');
    }
    expect((await pool.execute('SELECT COUNT(*) FROM adapter_my_ro', [], OPTS)).rows).toEqual([['0']]);
  });

  it('gives the connection back in read-write mode', async () => {
    for (let i = 0; i < 6; i++) await pool.execute('SELECT 1', [], RO);
    for (let i = 0; i < 6; i++) await pool.execute("INSERT INTO adapter_my_ro VALUES ('ok')", [], OPTS);
    expect((await pool.execute('SELECT COUNT(*) FROM adapter_my_ro', [], OPTS)).rows).toEqual([['6']]);
  });
});
