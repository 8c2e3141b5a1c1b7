// SPEC.md 2.2 `ssl` / `verify_server_hostname` mapped to each driver's TLS options.
//
//   ssl off                     plain TCP
//   ssl, no CA                  encrypted, certificate not verified
//   ssl + CA                    chain verified against the CA, name not checked
//   ssl + CA + verify hostname  chain and name verified (libpq `verify-full`)
//   client cert + key           presented to the server in every mode with ssl on
//
// Node's TLS does both checks by default; the modes below switch them off one by one, and name
// the host to check explicitly rather than relying on what each driver passes as `servername`.
import { isIP } from 'node:net';
import {
  type ConnectionOptions,
  checkServerIdentity,
  createSecureContext,
  type PeerCertificate,
  type SecureContextOptions,
} from 'node:tls';
import type { SslOptions as MysqlSslOptions } from 'mysql2';
import { AdapterError } from './errors.ts';
import type { SslSettings } from './types.ts';

/** The TLS mode a database's SSL settings select. */
export type TlsMode = 'off' | 'encrypt-only' | 'verify-ca' | 'verify-full';

/** The mode of `ssl`, after checking it is consistent (SPEC.md 2.2: hostname verification requires a CA). */
export function tlsMode(ssl: SslSettings): TlsMode {
  if (!ssl.enabled) return 'off';
  if (Boolean(ssl.clientCert) !== Boolean(ssl.clientKey)) {
    throw new AdapterError('a client certificate and a client key must be given together', 'config');
  }
  if (!ssl.caCert) {
    if (ssl.verifyServerHostname) {
      throw new AdapterError('verify_server_hostname requires a CA certificate', 'config');
    }
    return 'encrypt-only';
  }
  return ssl.verifyServerHostname ? 'verify-full' : 'verify-ca';
}

const skipNameCheck = (): undefined => undefined;

/**
 * Node `tls.connect` options for `ssl` against `hostname`, or null for a plain connection.
 * Used as is by node-postgres and as an https.Agent's options by the ClickHouse adapter.
 */
export function nodeTlsOptions(ssl: SslSettings, hostname: string): ConnectionOptions | null {
  const mode = tlsMode(ssl);
  if (mode === 'off') return null;
  const opts: ConnectionOptions = {
    // RFC 6066 §3: SNI carries DNS names only, never an IP address literal.
    servername: isIP(hostname) ? undefined : hostname,
    rejectUnauthorized: mode !== 'encrypt-only',
  };
  if (ssl.clientCert && ssl.clientKey) {
    opts.cert = ssl.clientCert;
    opts.key = ssl.clientKey;
  }
  if (mode === 'encrypt-only') return opts;
  opts.ca = ssl.caCert ?? undefined;
  opts.checkServerIdentity =
    mode === 'verify-full'
      ? // The configured hostname, not whatever the driver resolved or passed as servername.
        (_host: string, cert: PeerCertificate) => checkServerIdentity(hostname, cert)
      : skipNameCheck;
  return opts;
}

/** node-postgres `ssl`: `false` or tls.connect options. */
export function postgresSsl(ssl: SslSettings, hostname: string): false | ConnectionOptions {
  return nodeTlsOptions(ssl, hostname) ?? false;
}

/**
 * mysql2 `ssl`. mysql2 builds its own tls.connect call: it takes `rejectUnauthorized` and
 * `verifyIdentity` (name check against the configured host) instead of checkServerIdentity.
 */
export function mysqlSsl(ssl: SslSettings): MysqlSslOptions | undefined {
  const mode = tlsMode(ssl);
  if (mode === 'off') return undefined;
  const opts: MysqlSslOptions = {
    rejectUnauthorized: mode !== 'encrypt-only',
    verifyIdentity: mode === 'verify-full',
  };
  if (mode !== 'encrypt-only' && ssl.caCert) opts.ca = ssl.caCert;
  if (ssl.clientCert && ssl.clientKey) {
    opts.cert = ssl.clientCert;
    opts.key = ssl.clientKey;
  }
  return opts;
}

/**
 * ClickHouse over HTTP(S): the URL scheme and the https.Agent TLS options. The client's own `tls`
 * setting cannot turn verification off, so the adapter hands it an agent built from these.
 */
export function clickhouseTls(
  ssl: SslSettings,
  hostname: string,
): { protocol: 'http' | 'https'; agent: ConnectionOptions | null } {
  const agent = nodeTlsOptions(ssl, hostname);
  return { protocol: agent ? 'https' : 'http', agent };
}

/** tedious (mssql) TLS options. */
export interface SqlServerTls {
  encrypt: boolean;
  trustServerCertificate: boolean;
  cryptoCredentialsDetails: { ca?: string; cert?: string; key?: string };
}

/**
 * tedious `encrypt`, `trustServerCertificate`, `cryptoCredentialsDetails`.
 * DEVIATION: tedious always checks the server name when it verifies the chain (it has no
 * checkServerIdentity hook), so "CA without hostname check" is verified as verify-full: stricter,
 * never weaker. With ssl off, tedious may still encrypt the login packet; it is then not verified.
 */
export function sqlserverTls(ssl: SslSettings): SqlServerTls {
  const mode = tlsMode(ssl);
  const details: SqlServerTls['cryptoCredentialsDetails'] = {};
  if (mode === 'off')
    return { encrypt: false, trustServerCertificate: true, cryptoCredentialsDetails: details };
  if (ssl.caCert && mode !== 'encrypt-only') details.ca = ssl.caCert;
  if (ssl.clientCert && ssl.clientKey) {
    details.cert = ssl.clientCert;
    details.key = ssl.clientKey;
  }
  return {
    encrypt: true,
    trustServerCertificate: mode === 'encrypt-only',
    cryptoCredentialsDetails: details,
  };
}

/** node-oracledb thin-mode TLS settings. */
export interface OracleTls {
  protocol: 'tcp' | 'tcps';
  /** PEM "wallet": client certificate, its key and the CA, as thin mode reads it. */
  walletContent?: string;
  sslServerDNMatch?: boolean;
}

/**
 * node-oracledb thin mode: `tcps` in the connect string, `walletContent`, `sslServerDNMatch`.
 * DEVIATION (driver limits, README "Oracle"): thin mode always verifies the chain, so `ssl`
 * without a CA verifies against Node's built-in roots instead of skipping verification; and it
 * loads the CA from the same PEM as the client key, so a CA needs a client certificate and key.
 */
export function oracleTls(ssl: SslSettings): OracleTls {
  const mode = tlsMode(ssl);
  if (mode === 'off') return { protocol: 'tcp' };
  if (mode === 'encrypt-only') {
    // Without a wallet thin mode uses Node's default CAs; the name check follows the setting.
    const out: OracleTls = { protocol: 'tcps', sslServerDNMatch: false };
    if (ssl.clientCert) {
      throw new AdapterError(
        'oracle (thin mode): a client certificate needs the CA certificate as well',
        'config',
      );
    }
    return out;
  }
  if (!ssl.clientCert || !ssl.clientKey) {
    throw new AdapterError(
      'oracle (thin mode) reads the CA from a PEM wallet that must also hold a client certificate and key; add them, or remove the CA to verify against the system roots',
      'config',
    );
  }
  // Leaf certificate first: Node takes the first certificate of `cert` as the client's own.
  const walletContent = [ssl.clientCert.trim(), ssl.clientKey.trim(), (ssl.caCert as string).trim(), ''].join(
    '\n',
  );
  return { protocol: 'tcps', walletContent, sslServerDNMatch: mode === 'verify-full' };
}

/**
 * Why the TLS material of `ssl` cannot be used, or null. Node's own parser reads it once per
 * pool: a driver that meets an unreadable key mid-handshake may only time out (postgres.js
 * raised it where nothing caught it), which would hide the reason.
 */
export function tlsMaterialProblem(ssl: SslSettings): AdapterError | null {
  try {
    if (tlsMode(ssl) === 'off') return null;
  } catch (err) {
    return err as AdapterError;
  }
  const parts: Array<[string, SecureContextOptions]> = [];
  if (ssl.caCert) parts.push(['CA certificate', { ca: ssl.caCert }]);
  if (ssl.clientCert && ssl.clientKey) {
    parts.push(['client certificate', { cert: ssl.clientCert }]);
    parts.push(['client key', { key: ssl.clientKey }]);
    parts.push(['client certificate and key pair', { cert: ssl.clientCert, key: ssl.clientKey }]);
  }
  for (const [what, options] of parts) {
    try {
      createSecureContext(options);
    } catch (err) {
      // OpenSSL names the failure, never the material; the adapter still redacts it.
      return new AdapterError(
        `the ${what} could not be used: ${err instanceof Error ? err.message : String(err)}`,
        'config',
      );
    }
  }
  return null;
}
