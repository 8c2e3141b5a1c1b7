import { describe, expect, it } from 'vitest';
import { commandTag, postgresAdapter, postgresOptions } from './postgres.ts';
import type { ConnectionConfig } from './types.ts';

const base: ConnectionConfig = {
  adapter: 'postgres',
  hostname: 'db.example',
  port: 6543,
  database: 'app',
  username: 'reader',
  password: '',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: null,
};

describe('postgres adapter configuration', () => {
  it('maps the connection config to node-postgres options', () => {
    const o = postgresOptions(base);
    expect(o).toMatchObject({
      host: 'db.example',
      port: 6543,
      database: 'app',
      user: 'reader',
      ssl: false,
      application_name: 'countersign',
    });
    expect(o.connectionTimeoutMillis).toBe(30_000);
    expect(postgresOptions({ ...base, timeoutSeconds: 5 }).connectionTimeoutMillis).toBe(5000);
  });

  it('passes the password as a function, so an empty one is not replaced by $PGPASSWORD', () => {
    const password = postgresOptions(base).password;
    expect(typeof password).toBe('function');
    expect((password as () => string)()).toBe('');
  });

  it('turns TLS on with the mapped options', () => {
    const ssl = postgresOptions({ ...base, ssl: { ...base.ssl, enabled: true } }).ssl;
    expect(ssl).toMatchObject({ rejectUnauthorized: false, servername: 'db.example' });
  });

  it('reads the command and the count of a command tag', () => {
    expect(commandTag('SELECT 3')).toEqual({ command: 'SELECT', count: 3 });
    expect(commandTag('INSERT 0 12')).toEqual({ command: 'INSERT', count: 12 });
    expect(commandTag('CREATE TABLE')).toEqual({ command: 'CREATE TABLE', count: null });
    expect(commandTag('SET')).toEqual({ command: 'SET', count: null });
  });

  it('dials the dial address but names and verifies the configured hostname', () => {
    const ssl = { ...base.ssl, enabled: true, caCert: 'CA', verifyServerHostname: true };
    const o = postgresOptions({ ...base, ssl, dial: { host: '127.0.0.1', port: 40001 } });
    expect(o).toMatchObject({ host: '127.0.0.1', port: 40001 });
    expect(o.ssl).toMatchObject({ servername: 'db.example' });
  });

  it('uses $n placeholders', () => {
    expect(postgresAdapter.placeholder(3, null)).toBe('$3');
  });
});
