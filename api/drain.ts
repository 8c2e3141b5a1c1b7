import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Logger } from '../core/logger.ts';

/**
 * Graceful stop of the HTTP server, in the order a load balancer or a Kubernetes Service needs:
 *
 * 1. `draining` turns on: /readyz answers 503 and every response closes its connection
 *    (`Connection: close`, RFC 9112 section 9.6), so keep-alive clients reconnect, through the
 *    balancer, to another replica. Everything sent here meanwhile is still served.
 * 2. After `delayMs` (long enough for the balancer's probes to notice, and at least the keep-alive
 *    timeout so no client still holds an idle connection it may reuse) the listener closes.
 * 3. Connections still open end by themselves: after their response (step 1) or at the keep-alive
 *    timeout the client was told of. Never by cutting an idle one, which races a client that has
 *    just sent a request on it. After `graceMs` what is left is cut.
 */
export function trackRequests(server: Server, logger: Logger) {
  let active = 0;
  let draining = false;
  const connections = new Set<Socket>();
  let changed: (() => void) | null = null;
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      changed?.();
    });
  });
  // Upgraded sockets (agent tunnels) are not HTTP connections: their owners end them.
  server.on('upgrade', (req: IncomingMessage) => connections.delete(req.socket));
  // Before the app's own listener, so the header is set before a synchronous answer is written.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    active++;
    if (draining) res.setHeader('connection', 'close');
    res.once('close', () => {
      active--;
      changed?.();
    });
  });
  const settled = () => active === 0 && connections.size === 0;
  return {
    get draining() {
      return draining;
    },
    async drain(opts: { delayMs: number; graceMs: number; beforeForcedClose?: () => void }): Promise<void> {
      draining = true;
      if (opts.delayMs > 0) {
        logger.info({ delayMs: opts.delayMs }, 'draining: readiness failed; listener closes after the delay');
        await sleep(opts.delayMs);
      }
      // net.Server's close stops accepting without http.Server's closing of idle connections.
      NetServer.prototype.close.call(server);
      if (!settled() && opts.graceMs > 0) {
        logger.info(
          { inFlight: active, connections: connections.size },
          'draining: listener closed; waiting',
        );
        const done = await Promise.race([
          new Promise<boolean>((resolve) => {
            changed = () => settled() && resolve(true);
          }),
          sleep(opts.graceMs).then(() => false),
        ]);
        if (!done) logger.warn({ inFlight: active }, 'draining: grace period over; cutting what is left');
      }
      opts.beforeForcedClose?.();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.race([closed, sleep(5000)]);
    },
  };
}

/** A delay that does not hold the process open once nothing else does. */
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
