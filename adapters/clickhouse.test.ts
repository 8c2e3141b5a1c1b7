import { Agent } from 'node:https';
import { describe, expect, it } from 'vitest';
import {
  clickhouseAdapter,
  clickhouseError,
  clickhouseOptions,
  clickhouseParam,
  clickhousePlaceholder,
  clickhouseType,
  parseCompact,
} from './clickhouse.ts';
import { AdapterError } from './errors.ts';
import type { ConnectionConfig } from './types.ts';

const base: ConnectionConfig = {
  adapter: 'clickhouse',
  hostname: 'ch.example',
  port: 8443,
  database: 'events',
  username: 'reader',
  password: 'pw',
  ssl: { enabled: false, caCert: null, verifyServerHostname: false, clientCert: null, clientKey: null },
  timeoutSeconds: null,
};

describe('clickhouse placeholders: {pN:Type}, the type from the value', () => {
  it.each([
    ['text', 'String'],
    [42, 'Int64'],
    [1.5, 'Float64'],
    [2 ** 60, 'Float64'],
    [true, 'Bool'],
    [null, 'Nullable(String)'],
    [new Date(0), 'DateTime'],
    [-(2n ** 63n), 'Int64'],
    [2n ** 63n, 'UInt64'],
  ] as const)('%s → %s', (value, type) => {
    expect(clickhouseType(value)).toBe(type);
  });

  it('refuses an integer beyond 64 bits', () => {
    expect(() => clickhouseType(2n ** 64n)).toThrow(AdapterError);
  });

  it('writes the placeholder, bytes as hex through unhex()', () => {
    expect(clickhousePlaceholder(1, 'x')).toBe('{p1:String}');
    expect(clickhouseAdapter.placeholder(2, 3)).toBe('{p2:Int64}');
    expect(clickhousePlaceholder(3, new Uint8Array([0xde, 0xad]))).toBe('unhex({p3:String})');
    expect(clickhouseParam(new Uint8Array([0xde, 0xad]))).toBe('dead');
  });

  it('sends dates as Unix seconds and big integers as text', () => {
    expect(clickhouseParam(new Date('2024-01-02T03:04:05.999Z'))).toBe('1704164645');
    expect(clickhouseParam(2n ** 63n)).toBe('9223372036854775808');
    expect(clickhouseParam("'; drop table x; --")).toBe("'; drop table x; --");
  });
});

describe('clickhouse client options', () => {
  it('plain http without TLS, logging off (errors are the adapter’s to report)', () => {
    const o = clickhouseOptions(base);
    expect(o).toMatchObject({
      url: 'http://ch.example:8443',
      username: 'reader',
      password: 'pw',
      database: 'events',
    });
    expect(o.http_agent).toBeUndefined();
    expect(o.log?.level).toBeDefined();
  });

  it('https through an agent that carries the TLS mapping', () => {
    const o = clickhouseOptions({ ...base, ssl: { ...base.ssl, enabled: true } });
    expect(o.url).toBe('https://ch.example:8443');
    expect(o.http_agent).toBeInstanceOf(Agent);
    expect((o.http_agent as Agent).options).toMatchObject({
      rejectUnauthorized: false,
      servername: 'ch.example',
    });
  });

  it('certificate login without a password: user header, no Basic auth', () => {
    const ssl = { ...base.ssl, enabled: true, clientCert: 'CERT', clientKey: 'KEY' };
    const o = clickhouseOptions({ ...base, password: '', ssl });
    expect(o.set_basic_auth_header).toBe(false);
    expect(o.http_headers).toEqual({
      'X-ClickHouse-User': 'reader',
      'X-ClickHouse-SSL-Certificate-Auth': 'on',
    });
    expect(clickhouseOptions({ ...base, ssl }).http_headers).toBeUndefined();
  });

  it('sends requests to the dial address while TLS names the configured host', () => {
    const o = clickhouseOptions({
      ...base,
      ssl: { ...base.ssl, enabled: true },
      dial: { host: '127.0.0.1', port: 40003 },
    });
    expect(o.url).toBe('https://127.0.0.1:40003');
    expect((o.http_agent as Agent).options).toMatchObject({ servername: 'ch.example' });
  });

  it('brackets an IPv6 host in the URL', () => {
    expect(clickhouseOptions({ ...base, hostname: '::1' }).url).toBe('http://[::1]:8443');
  });
});

describe('clickhouse responses', () => {
  it('parses a JSONCompact document', () => {
    const doc = { meta: [{ name: 'a', type: 'UInt8' }], data: [[1]] };
    expect(parseCompact(JSON.stringify(doc))).toEqual(doc);
  });

  it('reports an exception appended to a partial result (HTTP 200 already sent)', () => {
    const partial =
      '{"meta":[{"name":"x","type":"UInt8"}],"data":[[0],\n[0]Code: 395, e.displayText() = DB::Exception: Value passed to \'throwIf\' function is non zero\n';
    const err = (() => {
      try {
        parseCompact(partial);
      } catch (e) {
        return e as AdapterError;
      }
    })();
    expect(err?.code).toBe('395');
    expect(err?.message).toMatch(/^Code: 395, e.displayText\(\) = DB::Exception: Value passed/);
  });

  it('reads the error code of old (18.x) and current servers', () => {
    expect(
      clickhouseError(
        new Error('Code: 193, e.displayText() = DB::Exception: Wrong password for user x\n'),
        [],
        'query',
      ),
    ).toMatchObject({
      code: '193',
      kind: 'connection',
      message: 'Code: 193, e.displayText() = DB::Exception: Wrong password for user x',
    });
    expect(clickhouseError(new Error('Code: 62. DB::Exception: Syntax error'), [], 'query')).toMatchObject({
      code: '62',
      kind: 'query',
    });
    expect(clickhouseError(Object.assign(new Error('x'), { code: '159' }), [], 'query').code).toBe('159');
  });
});
