// A small TCP load balancer for tests in the production shape: it sends each new connection to
// the next backend in rotation, tries the next one when a connect is refused, and records when
// each backend's readiness failed and when its listener stopped accepting. As a Kubernetes
// Service does, it probes /readyz every `probeMs` and takes a backend out after three failed
// probes in a row (a refused connect at once; a probe unanswered for `probeTimeoutMs` fails);
// with none in rotation it tries them all.
import { request } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Backend {
  host: string;
  port: number;
  ready: boolean;
  failures: number;
  /** When /readyz first answered non-200 after having answered 200 (ms since epoch). */
  notReadyAt: number | null;
  /** When a probe's connect was first refused after readiness had been seen. */
  refusedAt: number | null;
}

export interface Balancer {
  url: string;
  backends: Backend[];
  /** Forget what was recorded about a backend (before restarting it). */
  reset(port: number): void;
  close(): Promise<void>;
}

/** Backends by port on 127.0.0.1, or by loopback address and port. */
export async function startBalancer(
  ports: Array<number | { host: string; port: number }>,
  probeMs = 200,
  probeTimeoutMs = 5_000,
): Promise<Balancer> {
  const backends: Backend[] = ports.map((p) => ({
    ...(typeof p === 'number' ? { host: '127.0.0.1', port: p } : p),
    ready: false,
    failures: 0,
    notReadyAt: null,
    refusedAt: null,
  }));
  const seen = new Set<number>();
  let next = 0;
  const sockets = new Set<Socket>();

  const pick = (tried: Set<number>): Backend | undefined => {
    const none = backends.every((b) => !b.ready);
    for (let i = 0; i < backends.length; i++) {
      const b = backends[(next + i) % backends.length]!;
      if ((b.ready || none) && !tried.has(b.port)) {
        next = (next + i + 1) % backends.length;
        return b;
      }
    }
    return undefined;
  };

  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const tried = new Set<number>();
    const attempt = () => {
      const b = pick(tried);
      if (!b) return client.destroy();
      tried.add(b.port);
      const upstream = connect(b.port, b.host);
      sockets.add(upstream);
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.once('error', () => {
        sockets.delete(upstream);
        attempt();
      });
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.end();
      });
    };
    attempt();
  });

  const failed = (b: Backend, ok: boolean) => {
    b.failures = ok ? 0 : b.failures + 1;
    b.ready = b.failures < 3 && seen.has(b.port);
  };

  const probe = (b: Backend) =>
    new Promise<void>((done) => {
      const req = request(
        { host: b.host, port: b.port, path: '/readyz', agent: false, timeout: probeTimeoutMs },
        (res) => {
          res.resume();
          const ok = res.statusCode === 200;
          if (ok) seen.add(b.port);
          if (!ok && seen.has(b.port) && b.notReadyAt === null) b.notReadyAt = Date.now();
          failed(b, ok);
          done();
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        const refused = err.code === 'ECONNREFUSED';
        if (refused && seen.has(b.port) && b.refusedAt === null) b.refusedAt = Date.now();
        failed(b, false);
        if (refused) b.ready = false;
        done();
      });
      req.on('timeout', () => req.destroy());
      req.end();
    });

  let stopped = false;
  // One loop per backend: a slow answer from one never delays noticing another.
  const loops = backends.map(async (b) => {
    while (!stopped) {
      await probe(b);
      await new Promise((r) => setTimeout(r, probeMs));
    }
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    backends,
    reset(p) {
      const b = backends.find((x) => x.port === p)!;
      b.notReadyAt = null;
      b.failures = 0;
      b.refusedAt = null;
      seen.delete(p);
    },
    async close() {
      stopped = true;
      await Promise.all(loops);
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
