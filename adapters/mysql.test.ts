import { describe, expect, it } from 'vitest';
import { mysqlAdapter, mysqlOptions, xaSurvivesDisconnect } from './mysql.ts';
import type { ConnectionConfig } from './types.ts';

const base: ConnectionConfig = {
  adapter: 'mysql',
  hostname: 'db.example',
  port: 3307,
  database: 'app',
  username: 'reader',
  password: 'pw',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: 7,
};

describe('mysql adapter configuration', () => {
  it('maps the connection config to mysql2 options', () => {
    expect(mysqlOptions(base)).toMatchObject({
      host: 'db.example',
      port: 3307,
      user: 'reader',
      password: 'pw',
      database: 'app',
      ssl: undefined,
      connectTimeout: 7000,
      multipleStatements: false,
    });
  });

  it('asks mysql2 for exact values: big numbers and dates as strings, Date parameters in UTC', () => {
    expect(mysqlOptions(base)).toMatchObject({
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      timezone: 'Z',
    });
  });

  it('maps TLS settings', () => {
    expect(mysqlOptions({ ...base, ssl: { ...base.ssl, enabled: true } }).ssl).toEqual({
      rejectUnauthorized: false,
      verifyIdentity: false,
    });
  });

  it('gives mysql2 a socket that remembers an IP host only for verify-full, so the name check uses it', () => {
    const full = {
      enabled: true,
      caCert: 'CA',
      verifyServerHostname: true,
      clientCert: null,
      clientKey: null,
    };
    expect(typeof mysqlOptions({ ...base, hostname: '10.0.0.5', ssl: full }).stream).toBe('function');
    expect(mysqlOptions({ ...base, ssl: full }).stream).toBeUndefined();
    expect(
      mysqlOptions({ ...base, hostname: '10.0.0.5', ssl: { ...full, verifyServerHostname: false } }).stream,
    ).toBeUndefined();
  });

  it('with a dial address, keeps the configured host for TLS and dials through its own socket', () => {
    const o = mysqlOptions({ ...base, dial: { host: '127.0.0.1', port: 40002 } });
    expect(o.host).toBe('db.example');
    expect(typeof o.stream).toBe('function');
  });

  it('uses ? placeholders', () => {
    expect(mysqlAdapter.placeholder(2, 'x')).toBe('?');
  });
});

describe('two-phase commit support', () => {
  it('counts on XA only where a prepared transaction outlives its connection', () => {
    expect(xaSurvivesDisconnect('10.11.19-MariaDB-0+deb12u1')).toBe(true);
    expect(xaSurvivesDisconnect('10.5.2-MariaDB')).toBe(true);
    expect(xaSurvivesDisconnect('10.4.30-MariaDB')).toBe(false);
    expect(xaSurvivesDisconnect('8.0.36')).toBe(true);
    expect(xaSurvivesDisconnect('5.7.6-log')).toBe(false);
    expect(xaSurvivesDisconnect('unknown')).toBe(false);
  });
});
