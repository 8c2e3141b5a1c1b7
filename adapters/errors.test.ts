import { describe, expect, it } from 'vitest';
import { AdapterError, redactSecrets, secretsOf, timeoutError, toAdapterError } from './errors.ts';
import type { SslSettings } from './types.ts';

const KEY = `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj
MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ
RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD
-----END CERTIFICATE-----`;
const ssl: SslSettings = {
  enabled: true,
  caCert: CERT,
  verifyServerHostname: false,
  clientCert: CERT,
  clientKey: KEY,
};

describe('redactSecrets: no password, key or certificate in an error message', () => {
  const secrets = secretsOf({ password: 'p@ss word!', ssl });

  it('removes the password wherever it appears, also URL-encoded', () => {
    const out = redactSecrets('login p@ss word! failed; url x://u:p%40ss%20word!@h', secrets);
    expect(out).not.toContain('p@ss word!');
    expect(out).not.toContain('p%40ss%20word!');
  });

  it('removes PEM blocks, also ones it was not told about', () => {
    const other = '-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----';
    const out = redactSecrets(`bad key ${KEY} and ${other} and a cut -----BEGIN CERTIFICATE-----\nMIID`, []);
    expect(out).toBe('bad key [PEM redacted] and [PEM redacted] and a cut [PEM redacted]');
  });

  it('removes a single base64 line of the key or certificate', () => {
    const line = KEY.split('\n')[2] as string;
    expect(redactSecrets(`error near ${line}`, secrets)).toBe('error near [redacted]');
  });

  it('removes the password of a URL and of key=value connection strings, even unknown ones', () => {
    expect(redactSecrets('cannot reach postgres://bob:hunter2@db:5432/x', [])).toBe(
      'cannot reach postgres://bob:[redacted]@db:5432/x',
    );
    expect(redactSecrets('Server=db;User Id=bob;Password=hunter2;Encrypt=true', [])).toBe(
      'Server=db;User Id=bob;Password=[redacted];Encrypt=true',
    );
    expect(redactSecrets('pwd = "a b c" rest', [])).toBe('pwd = [redacted] rest');
    expect(redactSecrets('{"user":"bob","password":"hu\\"nter2"}', [])).toBe(
      '{"user":"bob","password":"[redacted]"}',
    );
  });

  it("keeps the server's own wording that only mentions a password", () => {
    const mysql = "Access denied for user 'bob'@'10.0.0.1' (using password: YES)";
    expect(redactSecrets(mysql, secrets)).toBe(mysql);
    const pg = 'password authentication failed for user "bob"';
    expect(redactSecrets(pg, secrets)).toBe(pg);
  });

  it('removes even a one-letter password: a garbled message beats a leaked secret', () => {
    expect(redactSecrets('xyz', ['y'])).toBe('x[redacted]z');
  });
});

describe('toAdapterError', () => {
  it('keeps the message and code, drops everything else of the driver error', () => {
    const driver = Object.assign(new Error('relation "t" does not exist'), {
      code: '42P01',
      query: 'select * from t where secret = $1',
      parameters: ['hunter2'],
    });
    const e = toAdapterError(driver, [], 'query');
    expect(e).toBeInstanceOf(AdapterError);
    expect(e.message).toBe('relation "t" does not exist');
    expect(e.code).toBe('42P01');
    expect(e.kind).toBe('query');
    expect(JSON.stringify(e)).not.toContain('hunter2');
    expect(Object.keys(e)).toEqual(['kind', 'code', 'name']);
  });

  it('classifies network, TLS and login failures as connection errors whatever the caller did', () => {
    for (const code of [
      'ECONNREFUSED',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      '28P01',
      'ER_ACCESS_DENIED_ERROR',
      '193',
    ]) {
      expect(toAdapterError(Object.assign(new Error('x'), { code }), [], 'query').kind).toBe('connection');
    }
    expect(toAdapterError(Object.assign(new Error('x'), { code: 42 }), [], 'query').code).toBe('42');
  });

  it('gives AggregateError (every address refused) a message', () => {
    const agg = new AggregateError(
      [new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')],
      '',
    );
    expect(toAdapterError(agg, [], 'connection').message).toBe(
      'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    );
  });

  it('redacts the message and passes an AdapterError through', () => {
    expect(toAdapterError(new Error('bad pw hunter2'), ['hunter2'], 'connection').message).toBe(
      'bad pw [redacted]',
    );
    const own = new AdapterError('x', 'config');
    expect(toAdapterError(own, [], 'query')).toBe(own);
    expect(toAdapterError('plain string', [], 'query').message).toBe('plain string');
  });

  it('timeoutError names the limit and the redacted server message', () => {
    const e = timeoutError(2, 'canceling statement due to user request (pw hunter2)', ['hunter2']);
    expect(e.kind).toBe('timeout');
    expect(e.message).toBe(
      'statement timed out after 2 s and was canceled (server: canceling statement due to user request (pw [redacted]))',
    );
  });
});
