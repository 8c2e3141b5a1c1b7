// Connection configs for the adapter integration tests, built from the harness servers.
import { expect } from 'vitest';
import { AdapterError } from '../../adapters/errors.ts';
import type { AdapterName, AdapterPool, ConnectionConfig, SslSettings } from '../../adapters/types.ts';
import type { SqlServer } from '../harness/servers.ts';

export const SSL_OFF: SslSettings = {
  enabled: false,
  caCert: null,
  verifyServerHostname: false,
  clientCert: null,
  clientKey: null,
};

/** A config for `server` as its password account over `hostname`, with `ssl` merged into SSL off. */
export function configFor(
  adapter: AdapterName,
  server: SqlServer,
  ssl: Partial<SslSettings> = {},
  over: Partial<ConnectionConfig> = {},
): ConnectionConfig {
  return {
    adapter,
    hostname: server.host,
    port: server.port,
    database: server.database,
    username: server.user,
    password: server.password,
    ssl: { ...SSL_OFF, ...ssl },
    timeoutSeconds: 5,
    ...over,
  };
}

/** The five SSL cases for a server with the harness TLS material. */
export function sslCases(server: SqlServer) {
  const { tls } = server;
  return {
    encryptOnly: { enabled: true },
    verifyCa: { enabled: true, caCert: tls.caCert },
    verifyFull: { enabled: true, caCert: tls.caCert, verifyServerHostname: true },
    otherCa: { enabled: true, caCert: tls.otherCaCert },
    clientCert: { enabled: true, caCert: tls.caCert, clientCert: tls.clientCert, clientKey: tls.clientKey },
  } satisfies Record<string, Partial<SslSettings>>;
}

/** Runs `fn` with a pool and always closes it. */
export async function withPool<T>(pool: AdapterPool, fn: (pool: AdapterPool) => Promise<T>): Promise<T> {
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}

/** The AdapterError `promise` rejects with (fails the test if it resolves or throws something else). */
export async function rejection(promise: Promise<unknown>): Promise<AdapterError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to fail').toBeInstanceOf(AdapterError);
  return err as AdapterError;
}

/** No secret of `server` or its TLS material in `message`. */
export function expectNoSecrets(message: string, server: SqlServer, password = server.password): void {
  expect(message).not.toContain(password);
  expect(message).not.toContain('-----BEGIN');
  for (const pem of [server.tls.clientKey, server.tls.clientCert]) {
    const body = pem.split('\n').find((line) => line.length > 40);
    if (body) expect(message).not.toContain(body);
  }
}

/** The harness servers answer the TLS name check for this text (RFC 6125 mismatch wording). */
export const WRONG_NAME = /altnames|does not match|Hostname\/IP/i;
/** A chain that does not end at the trusted CA. */
export const UNTRUSTED =
  /self-signed certificate in certificate chain|unable to verify|unable to get local issuer/i;
