// Which store errors mean "the store cannot be reached now" rather than "this request is wrong":
// a refused or lost connection, a server shutting down or not yet accepting, no free connection.
// The API answers those with 503 and Retry-After (RFC 9110 section 15.6.4) instead of 500.

/** Node socket errors and postgres.js connection errors. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);

/**
 * PostgreSQL SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01–57P03
 * (shutting down, crash recovery, cannot connect now) and 53300 (too many connections).
 */
const SQLSTATE = /^(08...|57P0[1-3]|53300)$/;

/** Whether `err` (or an error it wraps) says the store is unreachable. */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || SQLSTATE.test(code))) return true;
    // AggregateError (several addresses refused) and wrapped causes.
    const inner = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(inner) && inner.some(isStoreUnavailable)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
