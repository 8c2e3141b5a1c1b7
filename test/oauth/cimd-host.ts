// A real https server that publishes client ID metadata documents, as an AI client's vendor does
// (claude.ai, vscode.dev), with a certificate for `localhost` signed by a test CA.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTls } from '../harness/tls.ts';

/** How one path answers. */
export interface Route {
  status?: number;
  headers?: Record<string, string>;
  /** JSON-serialised unless a string. */
  body?: unknown;
  /** Sent in two writes without content-length (chunked), to test the streaming size limit. */
  chunked?: boolean;
  /** Waits this long before answering. */
  delayMs?: number;
}

export interface MetadataHost {
  /** https://localhost:<port> */
  origin: string;
  port: number;
  caFile: string;
  /** Requests each path received. */
  hits: Map<string, number>;
  route(path: string, route: Route): string;
  stop(): Promise<void>;
}

export async function startMetadataHost(): Promise<MetadataHost> {
  const dir = join(tmpdir(), `cimd-tls-${process.pid}-${Date.now()}`);
  const tls = await makeTls(dir, 'unused');
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const server: Server = createServer(
    { cert: await readFile(tls.serverCertFile), key: await readFile(tls.serverKeyFile) },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://localhost').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const route = routes.get(path);
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      const send = () => {
        const body = typeof route.body === 'string' ? route.body : JSON.stringify(route.body ?? {});
        const headers = { 'content-type': 'application/json', ...route.headers };
        if (route.chunked) {
          res.writeHead(route.status ?? 200, headers);
          res.write(body.slice(0, body.length / 2));
          res.end(body.slice(body.length / 2));
        } else res.writeHead(route.status ?? 200, headers).end(body);
      };
      if (route.delayMs) setTimeout(send, route.delayMs).unref();
      else send();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const origin = `https://localhost:${port}`;
  return {
    origin,
    port,
    caFile: tls.caCertFile,
    hits,
    route(path, route) {
      routes.set(path, route);
      return origin + path;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
