// The worker's own HTTP endpoint (WORKER_HTTP_PORT; none unless set): liveness, readiness
// (polling, and Temporal answers) and Prometheus metrics, the Temporal SDK's runtime metrics
// beside Countersign's own. The SDK core serves its metrics on a loopback port of its own; this
// endpoint reads them from there so one scrape target gives both.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/logger.ts';
import { processRegistry } from '../core/metrics.ts';

export interface WorkerHttp {
  port: number;
  close(): Promise<void>;
}

/** A free loopback address for the SDK core's Prometheus exporter. */
export async function loopbackMetricsAddress(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return `127.0.0.1:${port}`;
}

export async function startWorkerHttp(opts: {
  host: string;
  port: number;
  logger: Logger;
  /** Where the SDK core serves its metrics. */
  sdkMetricsAddress: string;
  ready(): Promise<boolean>;
}): Promise<WorkerHttp> {
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return json(405, { status: 'method not allowed' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const ready = await withTimeout(opts.ready(), 2000).catch(() => false);
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready' });
    }
    if (path === '/metrics') {
      const ours = await processRegistry.metrics();
      // The SDK's exporter may not be up yet, or may have stopped with the worker: ours still go out.
      const sdk = await withTimeout(
        fetch(`http://${opts.sdkMetricsAddress}/metrics`).then((r) => (r.ok ? r.text() : '')),
        2000,
      ).catch(() => '');
      res.writeHead(200, { 'content-type': processRegistry.contentType });
      return res.end(`${ours}\n${sdk}`);
    }
    json(404, { status: 'not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  opts.logger.info({ port }, 'worker http listening');
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
