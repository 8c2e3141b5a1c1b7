// The process's last line of defence against a socket error nobody listened for. Every outbound
// connection settles its failures itself (core/outbound/request.ts); this handler exists for the
// case a library or a Node code path still emits an 'error' event on a socket without a
// listener, which Node turns into an uncaught exception that ends the process: one failed
// connection (a peer that resets, a host with no route) would take down every request and run
// the process serves.
//
// Only socket-type errors are survived. Such an error belongs to one connection, which Node has
// already destroyed when it emits it; nothing else in the process shares its state, so serving
// on is safe. Any other uncaught exception or unhandled rejection may have left shared state
// half-changed (a pool, a cache, a transaction's bookkeeping): the process logs it and exits as
// Node would, and the supervisor restarts it.
import type { Logger } from './logger.ts';

/** errno and OpenSSL/Node codes of errors that concern one network connection only. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPROTO',
  'ERR_SOCKET_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
]);
const SOCKET_SYSCALLS = new Set(['connect', 'read', 'write', 'getaddrinfo', 'getnameinfo']);

/** True for an error that concerns one network connection only. */
export function isSocketError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, syscall } = err as NodeJS.ErrnoException;
  if (code && (SOCKET_CODES.has(code) || /^ERR_SSL_/.test(code))) return true;
  return syscall !== undefined && SOCKET_SYSCALLS.has(syscall);
}

/** Installs the handlers in a long-running process (`serve`, `worker`). */
export function keepServingOnSocketErrors(logger: Logger): void {
  const survive = (err: unknown, origin: string) => {
    if (isSocketError(err)) {
      const e = err as NodeJS.ErrnoException;
      // The message names the peer and the failure, never request data.
      logger.error(
        { err: { code: e.code, syscall: e.syscall, message: e.message.slice(0, 300) }, origin },
        'a socket error no one handled; the connection is gone, the process keeps serving',
      );
      return;
    }
    logger.fatal({ err, origin }, 'uncaught error; the process exits');
    // pino writes synchronously to stdout; exit with Node's own code for an uncaught exception.
    process.exit(1);
  };
  process.on('uncaughtException', (err, origin) => survive(err, origin));
  process.on('unhandledRejection', (reason) => survive(reason, 'unhandledRejection'));
}
