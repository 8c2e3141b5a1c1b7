// The one error type adapters throw. Driver errors can carry connection strings, URLs with
// credentials or the TLS material they choked on, so every message is rebuilt from the driver's
// text with the secrets taken out, and nothing else of the driver error (query, parameters,
// config, cause) travels on (DESIGN.md "Identity and authorization": secrets never appear in an
// error message).
import type { ConnectionConfig } from './types.ts';

/** What failed: the configuration, reaching/logging in to the server, the statement, or the time limit. */
export type AdapterErrorKind = 'config' | 'connection' | 'query' | 'timeout';

/** An adapter failure. `message` is the server's or driver's own text, secrets removed. */
export class AdapterError extends Error {
  override name = 'AdapterError';
  constructor(
    message: string,
    readonly kind: AdapterErrorKind,
    /** The driver's code when it gave one: SQLSTATE (postgres), ER_* (mysql), ClickHouse code, ORA-nnnnn, E* (node). */
    readonly code?: string,
  ) {
    super(message);
  }
}

const REDACTED = '[redacted]';
const PEM_BLOCK = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g;
// scheme://user:password@host — keep the user, drop the password.
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)[^\s@/]*@/gi;
// password=... / pwd=... as in ODBC, ADO and libpq connection strings, and "password": "..." in
// JSON. Not `password: YES`: that is MySQL's own wording in an access-denied message.
const KEY_VALUE_PASSWORD = /\b(password|passwd|pwd)(\s*=\s*)("[^"]*"|'[^']*'|[^\s;,&)]+)/gi;
const JSON_PASSWORD = /("(?:password|passwd|pwd)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;

/** The secrets of a connection config, as they could appear in a driver message. */
export function secretsOf(config: Pick<ConnectionConfig, 'password' | 'ssl'>): string[] {
  const out: string[] = [];
  const add = (s: string | null) => {
    if (!s) return;
    out.push(s);
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out.push(encoded);
  };
  add(config.password);
  for (const pem of [config.ssl.clientKey, config.ssl.clientCert, config.ssl.caCert]) {
    if (!pem) continue;
    add(pem);
    // A driver may quote a single line of the material it failed to parse.
    for (const line of pem.split(/\r?\n/)) if (line.length >= 16 && !line.startsWith('-----')) out.push(line);
  }
  // Longest first, so a secret that contains another is removed whole.
  return out.sort((a, b) => b.length - a.length);
}

/**
 * `message` without PEM blocks, URL passwords, `password=` pairs or any literal secret. Every
 * non-empty secret is removed, however short: a garbled message is better than a leaked password.
 */
export function redactSecrets(message: string, secrets: readonly string[]): string {
  let out = message.replace(PEM_BLOCK, '[PEM redacted]').replace(URL_USERINFO, `$1${REDACTED}@`);
  out = out.replace(KEY_VALUE_PASSWORD, `$1$2${REDACTED}`).replace(JSON_PASSWORD, `$1"${REDACTED}"`);
  for (const secret of secrets) if (secret) out = out.split(secret).join(REDACTED);
  return out;
}

// Failing to reach the server, the TLS handshake or the login: `connection`, whatever we were doing.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'HANDSHAKE_NO_SSL_SUPPORT', // mysql2
  'PROTOCOL_CONNECTION_LOST',
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
  '28P01', // postgres invalid_password
  '28000', // postgres invalid_authorization_specification
  '3D000', // postgres invalid_catalog_name (database does not exist)
  '193', // ClickHouse WRONG_PASSWORD
  '516', // ClickHouse AUTHENTICATION_FAILED
  'ELOGIN', // mssql
  'ESOCKET', // mssql
  'ORA-01017', // invalid username/password
]);

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code) return code;
  if (typeof code === 'number') return String(code);
  return undefined;
}

function isConnectionCode(code: string): boolean {
  return CONNECTION_CODES.has(code) || /CERT|SELF_SIGNED|ERR_TLS|ERR_SSL|UNABLE_TO_/.test(code);
}

/**
 * Wraps any thrown value as an AdapterError with secrets removed. `kind` is what the caller was
 * doing; a network, TLS or login failure is `connection` whatever that was.
 */
export function toAdapterError(
  err: unknown,
  secrets: readonly string[],
  kind: AdapterErrorKind,
): AdapterError {
  if (err instanceof AdapterError) return err;
  const code = codeOf(err);
  let message = err instanceof Error ? err.message : String(err);
  // AggregateError (e.g. every address of `localhost` refused) has an empty message of its own.
  if (!message && err instanceof AggregateError)
    message = err.errors.map((e) => String(e?.message ?? e)).join('; ');
  if (!message) message = code ?? 'unknown error';
  const resolved = kind !== 'timeout' && code && isConnectionCode(code) ? 'connection' : kind;
  return new AdapterError(redactSecrets(message, secrets), resolved, code);
}

/** The error for a statement stopped at its time limit; `detail` is what the server said, if anything. */
export function timeoutError(
  seconds: number,
  detail: string | undefined,
  secrets: readonly string[],
): AdapterError {
  const said = detail ? ` (server: ${redactSecrets(detail, secrets)})` : '';
  return new AdapterError(
    `statement timed out after ${seconds} s and was canceled${said}`,
    'timeout',
    'TIMEOUT',
  );
}
