import oracledb, { type Metadata } from 'oracledb';
import { describe, expect, it } from 'vitest';
import {
  ORACLE_READ_ONLY,
  type OracleSession,
  oracleAdapter,
  oracleBind,
  oracleConnectionAttributes,
  oracleConnectString,
  oracleFetchType,
  oraclePoolAttributes,
  oracleResult,
  oracleRun,
  wallClock,
} from './oracle.ts';
import type { ConnectionConfig } from './types.ts';

// No Oracle server runs here (README.md): these pin the configuration, TLS and result shaping.
const base: ConnectionConfig = {
  adapter: 'oracle',
  hostname: 'ora.example',
  port: 1521,
  database: 'FREEPDB1',
  username: 'reader',
  password: 'pw',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: null,
};

describe('oracle configuration (thin mode)', () => {
  it('builds an Easy Connect string with the service name', () => {
    expect(oracleConnectString(base)).toBe('tcp://ora.example:1521/FREEPDB1');
    expect(oracleConnectString({ ...base, hostname: '::1' })).toBe('tcp://[::1]:1521/FREEPDB1');
    const ssl = { ...base.ssl, enabled: true };
    expect(oracleConnectString({ ...base, ssl })).toBe('tcps://ora.example:1521/FREEPDB1');
  });

  it('refuses host and service names that would change the connect string', () => {
    expect(() => oracleConnectString({ ...base, database: 'x?ssl_server_dn_match=no' })).toThrow(
      /service name/,
    );
    expect(() => oracleConnectString({ ...base, hostname: 'h)(PORT=1)' })).toThrow(/host name/);
  });

  it('maps the TLS wallet and DN match into the connection attributes', () => {
    const ssl = {
      enabled: true,
      caCert: 'CA',
      verifyServerHostname: true,
      clientCert: 'CERT',
      clientKey: 'KEY',
    };
    expect(oracleConnectionAttributes({ ...base, ssl })).toEqual({
      user: 'reader',
      password: 'pw',
      connectString: 'tcps://ora.example:1521/FREEPDB1',
      connectTimeout: 30,
      walletContent: 'CERT\nKEY\nCA\n',
      sslServerDNMatch: true,
    });
    expect(oraclePoolAttributes(base)).toMatchObject({
      poolMin: 0,
      poolMax: 5,
      connectString: 'tcp://ora.example:1521/FREEPDB1',
    });
  });

  it('stays in thin mode and uses :n placeholders', () => {
    oracleAdapter.connect(base);
    expect(oracledb.thin).toBe(true);
    expect(oracleAdapter.placeholder(2, 'x')).toBe(':2');
  });
});

describe('oracle values', () => {
  const meta = (m: Partial<Metadata>): Metadata => ({ name: 'c', ...m });

  it('fetches NUMBER with decimals or more than 15 digits as exact text, unconstrained NUMBER as numbers', () => {
    const asText = { type: oracledb.DB_TYPE_VARCHAR };
    expect(oracleFetchType(meta({ dbType: oracledb.DB_TYPE_NUMBER, precision: 10, scale: 2 }))).toEqual(
      asText,
    );
    expect(oracleFetchType(meta({ dbType: oracledb.DB_TYPE_NUMBER, precision: 19, scale: 0 }))).toEqual(
      asText,
    );
    expect(
      oracleFetchType(meta({ dbType: oracledb.DB_TYPE_NUMBER, precision: 10, scale: 0 })),
    ).toBeUndefined();
    expect(
      oracleFetchType(meta({ dbType: oracledb.DB_TYPE_NUMBER, precision: 0, scale: -127 })),
    ).toBeUndefined();
  });

  it('reads LOBs whole and converts zone-less dates to wall-clock text', () => {
    expect(oracleFetchType(meta({ dbType: oracledb.DB_TYPE_CLOB }))).toEqual({
      type: oracledb.DB_TYPE_VARCHAR,
    });
    expect(oracleFetchType(meta({ dbType: oracledb.DB_TYPE_BLOB }))).toEqual({ type: oracledb.DB_TYPE_RAW });
    expect(oracleFetchType(meta({ dbType: oracledb.DB_TYPE_DATE }))?.converter).toBe(wallClock);
    // thin mode builds a zone-less DATE from local components; they come back unchanged.
    expect(wallClock(new Date(2024, 0, 2, 3, 4, 5, 6))).toBe('2024-01-02T03:04:05.006');
    expect(wallClock(null)).toBe(null);
  });

  it('binds booleans as 1/0, big integers as text and bytes as Buffer', () => {
    expect(oracleBind(true)).toBe(1);
    expect(oracleBind(2n ** 70n)).toBe('1180591620717411303424');
    expect(Buffer.isBuffer(oracleBind(new Uint8Array([1])))).toBe(true);
    expect(oracleBind("'; drop table x; --")).toBe("'; drop table x; --");
  });

  it('shapes a result: columns from metaData, capped rows, warnings, affected rows', () => {
    const select = oracleResult(
      {
        metaData: [{ name: 'ID' }, { name: 'AT' }],
        rows: [
          [1, new Date(0)],
          [2, null],
          [3, null],
        ],
        warning: { message: 'ORA-24344: success with compilation error' },
      },
      'SELECT',
      2,
    );
    expect(select).toEqual({
      columns: ['ID', 'AT'],
      rows: [
        [1, '1970-01-01T00:00:00.000Z'],
        [2, null],
      ],
      command: 'SELECT',
      messages: ['ORA-24344: success with compilation error'],
      num_rows: 2,
      truncated: true,
    });
    expect(oracleResult({ rowsAffected: 4 }, 'UPDATE', 10)).toMatchObject({
      columns: [],
      num_rows: 4,
      truncated: false,
    });
  });
});

describe('oracle read-only statements', () => {
  /** A session that records the calls node-oracledb would send; `fail` makes the statement fail. */
  function recorder(fail = false) {
    const calls: Array<{ sql: string; autoCommit: boolean | undefined } | 'rollback'> = [];
    const session: OracleSession = {
      async execute<T>(sql: string, _binds: unknown[], options: { autoCommit?: boolean }) {
        calls.push({ sql, autoCommit: options.autoCommit });
        if (fail && sql !== ORACLE_READ_ONLY)
          throw new Error(
            'ORA-01456: may not perform insert/delete/update operation inside a READ ONLY transaction',
          );
        return { rows: [] as T[] };
      },
      async rollback() {
        calls.push('rollback');
      },
    };
    return { calls, session };
  }
  const opts = { outFormat: 4001, maxRows: 11, fetchTypeHandler: oracleFetchType };

  it('commits an ordinary statement at once', async () => {
    const { calls, session } = recorder();
    await oracleRun(session, 'SELECT 1 FROM DUAL', [], { ...opts, readOnly: false });
    expect(calls).toEqual([{ sql: 'SELECT 1 FROM DUAL', autoCommit: true }]);
  });

  it('runs a read-only statement in a read-only transaction and rolls it back', async () => {
    const { calls, session } = recorder();
    await oracleRun(session, 'SELECT name FROM people WHERE id = :1', [7], { ...opts, readOnly: true });
    expect(calls).toEqual([
      { sql: 'SET TRANSACTION READ ONLY', autoCommit: false },
      { sql: 'SELECT name FROM people WHERE id = :1', autoCommit: false },
      'rollback',
    ]);
  });

  it('rolls back when the read-only statement fails, and reports its error', async () => {
    const { calls, session } = recorder(true);
    await expect(
      oracleRun(session, 'SELECT f_writes() FROM DUAL', [], { ...opts, readOnly: true }),
    ).rejects.toThrow(/ORA-01456/);
    expect(calls.at(-1)).toBe('rollback');
    expect(calls).toHaveLength(3);
  });
});
