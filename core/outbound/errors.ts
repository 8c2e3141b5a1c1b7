// Every way an outbound connection can fail, as one ordinary error the caller maps to its own
// answer (a failed step, an error page, invalid_client).

export type OutboundFailure =
  /** The network policy refused the target (before any packet was sent). */
  | 'refused'
  /** The port is not one this kind of request may use (metadata documents: 443). */
  | 'port'
  /** The host name did not resolve. */
  | 'dns'
  /** No route to the address (ENETUNREACH, EHOSTUNREACH). */
  | 'unreachable'
  /** Nothing listens there (ECONNREFUSED). */
  | 'connection_refused'
  /** The peer reset or closed the connection before a complete answer. */
  | 'reset'
  /** TLS failed: certificate not trusted, wrong name, protocol error. */
  | 'tls'
  /** No complete answer within the deadline. */
  | 'timeout'
  /** The answer is larger than the caller accepts. */
  | 'too_large'
  | 'other';

export class OutboundError extends Error {
  override name = 'OutboundError';
  constructor(
    readonly failure: OutboundFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The failure kind of a socket, TLS or HTTP parser error. */
export function failureOf(err: unknown): OutboundFailure {
  if (err instanceof OutboundError) return err.failure;
  const code = String((err as { code?: unknown })?.code ?? '');
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'EADDRNOTAVAIL') return 'unreachable';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code.startsWith('HPE_'))
    return 'reset';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (
    /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/.test(code) ||
    /SSL|TLS|certificate/i.test((err as Error)?.message ?? '')
  )
    return 'tls';
  if (/socket hang up|other side closed/i.test((err as Error)?.message ?? '')) return 'reset';
  return 'other';
}

/** An OutboundError for any error a connection raised; the message names the peer's behaviour only. */
export function asOutboundError(err: unknown, target: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const failure = failureOf(err);
  const what: Record<OutboundFailure, string> = {
    refused: 'refused by the network policy',
    port: 'refused by the network policy',
    dns: 'its host name does not resolve',
    unreachable: 'no route to it',
    connection_refused: 'it refused the connection',
    reset: 'it closed the connection before answering',
    tls: 'the TLS handshake failed',
    timeout: 'it did not answer in time',
    too_large: 'its answer is too large',
    other: 'the connection failed',
  };
  const detail = ((err as Error)?.message ?? String(err)).slice(0, 200);
  return new OutboundError(failure, `${target}: ${what[failure]} (${detail})`);
}
