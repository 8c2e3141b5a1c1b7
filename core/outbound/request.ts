// One HTTP(S) request through the outbound policy. The socket goes to the IP address the policy
// checked (an IP literal: Node makes no DNS lookup of its own, so no rebinding), with the host
// name as TLS server name and Host header. Every failure, whenever it happens (DNS, a connect
// that fails at once, TLS, a reset mid-body, a deadline), settles the promise once as an
// OutboundError: nothing reaches the process as an unhandled 'error' event. Redirects are
// returned, never followed (a redirect could point where the policy would refuse).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { asOutboundError, OutboundError } from './errors.ts';
import type { OutboundPolicy, TargetOptions } from './policy.ts';

export interface OutboundRequest extends TargetOptions {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
  /** The whole exchange (DNS, connect, TLS, response body) must finish within this. */
  timeoutMs: number;
  /** A longer body fails the request with `too_large`. */
  maxBodyBytes: number;
  /** Trusted CAs instead of Node's default roots (https only). */
  ca?: string[];
  /** Aborts the request (a caller's own deadline). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Sends the request; rejects only with OutboundError. */
export async function outboundRequest(
  policy: OutboundPolicy,
  req: OutboundRequest,
): Promise<OutboundResponse> {
  const deadline = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([deadline, req.signal]) : deadline;
  const label = `${req.url.protocol}//${req.url.host}`;
  const timedOut = () =>
    new OutboundError('timeout', `${label}: no complete answer within ${req.timeoutMs / 1000} s`);
  const target = await new Promise<Awaited<ReturnType<OutboundPolicy['target']>>>((resolve, reject) => {
    if (signal.aborted) return reject(timedOut());
    const onAbort = () => reject(timedOut());
    signal.addEventListener('abort', onAbort, { once: true });
    policy
      .target(req.url, req)
      .then(resolve, (err) => reject(asOutboundError(err, label)))
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
  return new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    const settle = (err: OutboundError | null, res?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (err) {
        client?.destroy();
        reject(err);
      } else resolve(res!);
    };
    const onAbort = () => settle(timedOut());
    const https = req.url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    let client: ReturnType<typeof send> | undefined;
    try {
      client = send(
        {
          host: target.address,
          family: target.family,
          port: target.port,
          path: req.url.pathname + req.url.search,
          method: req.method,
          headers: { host: req.url.host, ...req.headers },
          // A fresh connection each time: no pooled socket to some earlier address is reused.
          agent: false,
          ...(https ? { servername: isLiteral(target.host) ? undefined : target.host } : {}),
          ...(https && req.ca ? { ca: req.ca } : {}),
        },
        (res) => {
          const declared = Number(res.headers['content-length'] ?? 0);
          const tooLarge = () =>
            settle(
              new OutboundError('too_large', `${label}: the answer is larger than ${req.maxBodyBytes} bytes`),
            );
          if (declared > req.maxBodyBytes) return tooLarge();
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > req.maxBodyBytes) return tooLarge();
            chunks.push(chunk);
          });
          res.on('error', (err) => settle(asOutboundError(err, label)));
          res.on('aborted', () => settle(new OutboundError('reset', `${label}: the answer was cut off`)));
          res.on('end', () =>
            settle(null, {
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              headers: res.headers,
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
    } catch (err) {
      // Node may throw synchronously from request() when the connect fails at once.
      return settle(asOutboundError(err, label));
    }
    client.on('error', (err) => settle(asOutboundError(err, label)));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    client.end(req.body ?? undefined);
  });
}

function isLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
