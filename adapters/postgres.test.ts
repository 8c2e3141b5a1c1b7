import { describe, expect, it } from 'vitest';
import { postgresAdapter, postgresOptions } from './postgres.ts';
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
  it('maps the connection config to postgres.js options', () => {
    const o = postgresOptions(base);
    expect(o).toMatchObject({
      host: 'db.example',
      port: 6543,
      database: 'app',
      username: 'reader',
      ssl: false,
      prepare: false,
    });
    expect(o.connect_timeout).toBe(30);
    expect(postgresOptions({ ...base, timeoutSeconds: 5 }).connect_timeout).toBe(5);
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

  it('parses dates and times to ISO text and bytea to base64', () => {
    const types = postgresOptions(base).types ?? {};
    const parse = (oid: number, text: string) =>
      Object.values(types)
        .find((t) => t.from.includes(oid))
        ?.parse(text);
    expect(parse(1082, '2024-01-02')).toBe('2024-01-02');
    expect(parse(1114, '2024-01-02 10:11:12.123456')).toBe('2024-01-02T10:11:12.123456');
    expect(parse(1184, '2024-01-02 10:11:12.5+02')).toBe('2024-01-02T08:11:12.500Z');
    expect(parse(1184, 'infinity')).toBe('infinity');
    expect(parse(17, '\\xdeadbeef')).toBe('3q2+7w==');
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
