import { generateKeyPairSync } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { AdapterError } from './errors.ts';
import {
  clickhouseTls,
  mysqlSsl,
  nodeTlsOptions,
  oracleTls,
  postgresSsl,
  sqlserverTls,
  tlsMaterialProblem,
  tlsMode,
} from './ssl.ts';
import type { SslSettings } from './types.ts';

const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n';

const off: SslSettings = {
  enabled: false,
  caCert: CA,
  verifyServerHostname: true,
  clientCert: CERT,
  clientKey: KEY,
};
const encryptOnly: SslSettings = {
  enabled: true,
  caCert: null,
  verifyServerHostname: false,
  clientCert: null,
  clientKey: null,
};
const verifyCa: SslSettings = { ...encryptOnly, caCert: CA };
const verifyFull: SslSettings = { ...verifyCa, verifyServerHostname: true };
const withClient = (s: SslSettings): SslSettings => ({ ...s, clientCert: CERT, clientKey: KEY });

// What Node's checkServerIdentity reads from the peer certificate: the SANs win over the CN.
const serverCert = {
  subject: { CN: 'db.internal' },
  subjectaltname: 'DNS:localhost',
} as unknown as PeerCertificate;

describe('tlsMode (SPEC.md 2.2 ssl / verify_server_hostname)', () => {
  it('selects the mode from the settings', () => {
    expect(tlsMode(off)).toBe('off');
    expect(tlsMode(encryptOnly)).toBe('encrypt-only');
    expect(tlsMode(verifyCa)).toBe('verify-ca');
    expect(tlsMode(verifyFull)).toBe('verify-full');
  });

  it('refuses hostname verification without a CA, and half a client identity', () => {
    expect(() => tlsMode({ ...encryptOnly, verifyServerHostname: true })).toThrow(/requires a CA/);
    expect(() => tlsMode({ ...verifyCa, clientCert: CERT })).toThrow(AdapterError);
    expect(() => tlsMode({ ...verifyCa, clientKey: KEY })).toThrow(/together/);
  });
});

describe('nodeTlsOptions (postgres.js, ClickHouse agent)', () => {
  it('ssl off: no TLS at all, whatever certificates are stored', () => {
    expect(nodeTlsOptions(off, 'localhost')).toBeNull();
    expect(postgresSsl(off, 'localhost')).toBe(false);
  });

  it('ssl without CA: encrypted, certificate not verified', () => {
    const o = nodeTlsOptions(encryptOnly, 'localhost');
    expect(o).toEqual({ servername: 'localhost', rejectUnauthorized: false });
  });

  it('CA: the chain is verified against it, the name is not checked', () => {
    const o = nodeTlsOptions(verifyCa, '127.0.0.1');
    expect(o).toMatchObject({ rejectUnauthorized: true, ca: CA, servername: undefined });
    expect(o?.checkServerIdentity?.('127.0.0.1', serverCert)).toBeUndefined();
  });

  it('verify_server_hostname: the configured hostname must be on the certificate', () => {
    const right = nodeTlsOptions(verifyFull, 'localhost');
    expect(right).toMatchObject({ rejectUnauthorized: true, ca: CA, servername: 'localhost' });
    expect(right?.checkServerIdentity?.('ignored', serverCert)).toBeUndefined();
    const wrong = nodeTlsOptions(verifyFull, '127.0.0.1');
    // Whatever name the driver passes, the check is against the configured host.
    expect(wrong?.checkServerIdentity?.('localhost', serverCert)).toBeInstanceOf(Error);
    // RFC 6125 §6.4.4: with a SAN present, the CN is not a fallback.
    expect(nodeTlsOptions(verifyFull, 'db.internal')?.checkServerIdentity?.('x', serverCert)).toBeInstanceOf(
      Error,
    );
  });

  it('presents the client certificate and key in every mode with ssl on', () => {
    for (const s of [encryptOnly, verifyCa, verifyFull]) {
      expect(nodeTlsOptions(withClient(s), 'localhost')).toMatchObject({ cert: CERT, key: KEY });
    }
  });

  it('never sends an IP address as SNI (RFC 6066 §3)', () => {
    expect(nodeTlsOptions(verifyFull, '::1')?.servername).toBeUndefined();
  });
});

describe('mysqlSsl (mysql2)', () => {
  it('maps each mode to rejectUnauthorized / verifyIdentity', () => {
    expect(mysqlSsl(off)).toBeUndefined();
    expect(mysqlSsl(encryptOnly)).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(mysqlSsl(verifyCa)).toEqual({ rejectUnauthorized: true, verifyIdentity: false, ca: CA });
    expect(mysqlSsl(withClient(verifyFull))).toEqual({
      rejectUnauthorized: true,
      verifyIdentity: true,
      ca: CA,
      cert: CERT,
      key: KEY,
    });
  });
});

describe('clickhouseTls', () => {
  it('uses http when off and https with the Node TLS options otherwise', () => {
    expect(clickhouseTls(off, 'h')).toEqual({ protocol: 'http', agent: null });
    const on = clickhouseTls(encryptOnly, 'h');
    expect(on.protocol).toBe('https');
    expect(on.agent).toMatchObject({ rejectUnauthorized: false });
  });
});

describe('sqlserverTls (tedious)', () => {
  it('maps each mode to encrypt / trustServerCertificate / cryptoCredentialsDetails', () => {
    expect(sqlserverTls(off)).toEqual({
      encrypt: false,
      trustServerCertificate: true,
      cryptoCredentialsDetails: {},
    });
    expect(sqlserverTls(withClient(encryptOnly))).toEqual({
      encrypt: true,
      trustServerCertificate: true,
      cryptoCredentialsDetails: { cert: CERT, key: KEY },
    });
    // DEVIATION (tedious has no hook to skip the name check): a CA means verify-full.
    expect(sqlserverTls(verifyCa)).toEqual({
      encrypt: true,
      trustServerCertificate: false,
      cryptoCredentialsDetails: { ca: CA },
    });
    expect(sqlserverTls(verifyFull)).toEqual(sqlserverTls(verifyCa));
  });
});

describe('oracleTls (node-oracledb thin mode)', () => {
  it('tcp when off; tcps otherwise', () => {
    expect(oracleTls(off)).toEqual({ protocol: 'tcp' });
    expect(oracleTls(encryptOnly)).toEqual({ protocol: 'tcps', sslServerDNMatch: false });
  });

  it('puts certificate, key and CA in one PEM wallet, leaf first, and follows verify_server_hostname', () => {
    const full = oracleTls(withClient(verifyFull));
    expect(full.protocol).toBe('tcps');
    expect(full.sslServerDNMatch).toBe(true);
    expect(full.walletContent).toBe(`${CERT.trim()}\n${KEY.trim()}\n${CA.trim()}\n`);
    expect(oracleTls(withClient(verifyCa)).sslServerDNMatch).toBe(false);
  });

  it('says plainly what thin mode cannot do', () => {
    expect(() => oracleTls(verifyCa)).toThrow(/client certificate and key/);
    expect(() => oracleTls(withClient(encryptOnly))).toThrow(/needs the CA/);
  });
});

// A throw-away self-signed certificate (its key was discarded): real PEM for Node's parser.
const REAL_CERT = `-----BEGIN CERTIFICATE-----
MIIBlTCCATugAwIBAgIUeTWUZIkeMC3Z4OD4MEwkp2VxrvgwCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVY291bnRlcnNpZ24tdW5pdC10ZXN0MB4XDTI2MTEyMTE3NDUy
MloXDTM2MTExODE3NDUyMlowIDEeMBwGA1UEAwwVY291bnRlcnNpZ24tdW5pdC10
ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEiAoJc/Sy4Okyd0O+DHI7YYBy
Ww98bt+nbYghoIA9oqm9gNbszNjhZuO7Y8uUiIAuuruLgNudcS2p4mncmG1gTKNT
MFEwHQYDVR0OBBYEFEd+GEZtA9oJg34SNh6s345iKW5sMB8GA1UdIwQYMBaAFEd+
GEZtA9oJg34SNh6s345iKW5sMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
SAAwRQIgXfyilfTUhvB3/Ndapp2svsTTAAq4um/S+XiPZyQOIAgCIQCdjee5B+Fc
evUMzlOoPSOEEDXDQYTssepx/2gCj0bWQg==
-----END CERTIFICATE-----
`;
const freshKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;

describe('tlsMaterialProblem: unusable TLS material is reported before any connection', () => {
  it('accepts no material, or material Node can read', () => {
    expect(tlsMaterialProblem(off)).toBeNull();
    expect(tlsMaterialProblem(encryptOnly)).toBeNull();
    expect(tlsMaterialProblem({ ...verifyCa, caCert: REAL_CERT })).toBeNull();
  });

  it('names an unreadable key without quoting it', () => {
    const key =
      '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n';
    const problem = tlsMaterialProblem({ ...encryptOnly, clientCert: REAL_CERT, clientKey: key });
    expect(problem?.kind).toBe('config');
    expect(problem?.message).toMatch(/^the client key could not be used: /);
    expect(problem?.message).not.toContain('MIIEvQ');
  });

  it('names a key that does not belong to the certificate', () => {
    const problem = tlsMaterialProblem({ ...encryptOnly, clientCert: REAL_CERT, clientKey: freshKey() });
    expect(problem?.message).toMatch(
      /client certificate and key pair could not be used: .*key values mismatch/,
    );
  });

  it('reports inconsistent settings the same way', () => {
    expect(tlsMaterialProblem({ ...encryptOnly, verifyServerHostname: true })?.message).toMatch(
      /requires a CA/,
    );
  });
});
