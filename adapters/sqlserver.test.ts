import sql from 'mssql';
import { describe, expect, it } from 'vitest';
import { SqlServerResult, sqlserverAdapter, sqlserverBatch, sqlserverConfig } from './sqlserver.ts';
import type { ConnectionConfig } from './types.ts';

// No SQL Server runs here (README.md): these pin the configuration, TLS and result shaping.
const base: ConnectionConfig = {
  adapter: 'sqlserver',
  hostname: 'mssql.example',
  port: 1433,
  database: 'app',
  username: 'reader',
  password: 'pw',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: 12,
};

describe('sqlserver configuration', () => {
  it('maps the connection config to mssql', () => {
    const c = sqlserverConfig(base);
    expect(c).toMatchObject({
      server: 'mssql.example',
      port: 1433,
      database: 'app',
      user: 'reader',
      password: 'pw',
      connectionTimeout: 12_000,
      requestTimeout: 0,
      pool: { max: 5, min: 0 },
    });
    expect(c.options).toMatchObject({
      encrypt: false,
      trustServerCertificate: true,
      useUTC: true,
      appName: 'countersign',
    });
  });

  it('maps TLS: verified chain with the CA', () => {
    const c = sqlserverConfig({
      ...base,
      ssl: { ...base.ssl, enabled: true, caCert: 'CA', verifyServerHostname: true },
    });
    expect(c.options).toMatchObject({
      encrypt: true,
      trustServerCertificate: false,
      cryptoCredentialsDetails: { ca: 'CA' },
    });
  });

  it('uses @pN placeholders', () => {
    expect(sqlserverAdapter.placeholder(4, 1)).toBe('@p4');
  });
});

describe('sqlserver result shaping (events as mssql emits them in stream + arrayRowMode)', () => {
  it('takes column names from the first recordset and caps the rows', () => {
    const r = new SqlServerResult(2);
    r.onRecordset([
      { name: 'id', type: sql.BigInt },
      { name: 'id', type: sql.Int },
    ]);
    expect(r.onRow(['9007199254740993', 1])).toBe(true);
    expect(r.onRow(['2', 2])).toBe(true);
    expect(r.onRow(['3', 3])).toBe(false);
    r.onRowsAffected(3);
    expect(r.result('SELECT')).toEqual({
      columns: ['id', 'id'],
      rows: [
        ['9007199254740993', 1],
        ['2', 2],
      ],
      command: 'SELECT',
      messages: [],
      num_rows: 2,
      truncated: true,
    });
  });

  it('writes dates and times in the same ISO shapes as Postgres', () => {
    const r = new SqlServerResult(10);
    r.onRecordset([
      { name: 'd', type: sql.Date },
      { name: 't', type: sql.Time },
      { name: 'dt2', type: sql.DateTime2 },
      { name: 'dto', type: sql.DateTimeOffset },
      { name: 'bin', type: sql.VarBinary },
      { name: 'bit', type: sql.Bit },
    ]);
    const instant = new Date('2024-01-02T03:04:05.678Z');
    r.onRow([
      new Date('2024-01-02T00:00:00Z'),
      new Date('1970-01-01T10:11:12.500Z'),
      instant,
      instant,
      Buffer.from('hi'),
      true,
    ]);
    expect(r.result('SELECT').rows[0]).toEqual([
      '2024-01-02',
      '10:11:12.500',
      '2024-01-02T03:04:05.678',
      '2024-01-02T03:04:05.678Z',
      'aGk=',
      true,
    ]);
  });

  it('counts affected rows for writes and keeps PRINT / warning messages', () => {
    const r = new SqlServerResult(10);
    r.onRowsAffected(2);
    r.onRowsAffected(1);
    r.onInfo({ message: 'Warning: Null value is eliminated by an aggregate or other SET operation.' });
    expect(r.result('UPDATE')).toMatchObject({
      columns: [],
      num_rows: 3,
      command: 'UPDATE',
      messages: ['Warning: Null value is eliminated by an aggregate or other SET operation.'],
    });
  });

  it('returns only the first result set', () => {
    const r = new SqlServerResult(10);
    r.onRecordset([{ name: 'a', type: sql.Int }]);
    r.onRow([1]);
    r.onRecordset([{ name: 'b', type: sql.Int }]);
    r.onRow([2]);
    expect(r.result('EXEC')).toMatchObject({ columns: ['a'], rows: [[1]] });
  });
});

describe('sqlserver read-only statements (no read-only transaction in SQL Server: always rolled back)', () => {
  it('sends an ordinary statement as it is', () => {
    expect(sqlserverBatch('SELECT 1', false)).toBe('SELECT 1');
  });

  it('wraps a read-only statement in a transaction that is rolled back, aborting on any error', () => {
    expect(sqlserverBatch('SELECT name FROM people WHERE id = @p1', true)).toBe(
      'SET XACT_ABORT ON;\nBEGIN TRANSACTION;\nSELECT name FROM people WHERE id = @p1\nIF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;',
    );
  });

  it('keeps the rollback outside a trailing line comment', () => {
    const batch = sqlserverBatch('SELECT 1 -- note', true);
    const lines = batch.split('\n');
    expect(lines.at(-1)).toBe('IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;');
    expect(lines.at(-2)).toBe('SELECT 1 -- note');
  });
});
