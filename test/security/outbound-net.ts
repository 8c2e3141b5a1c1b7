// A network namespace for the outbound-policy tests: the service runs INSIDE it (spawned with
// `ip netns exec`), so every address it may try to reach is either local to the namespace or on
// the one veth link to the test process. The namespace has no default route: a regression that
// connects where the policy should refuse reaches a peer of this test or nothing at all, never
// another machine. Host names come from /etc/netns/<name>/hosts (which `ip netns exec` mounts
// over /etc/hosts) and the resolver is the namespace's own loopback, where nothing answers.
//
//   test process (host namespace)                 namespace
//   10.231.x.1  store, Temporal forwarders,       10.231.x.2  the service (serve --with-worker)
//               HTTP receiver                     127.0.0.1   the service's loopback
//   10.231.x.3  peer that resets connections
//   10.231.x.4  TLS peer with an untrusted cert
//   10.231.x.5  peer that never answers
//   10.231.x.6  TLS peer with a trusted cert (ports 443 and 8443)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers/processes.ts';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

export interface OutboundNet {
  name: string;
  /** Host end of the link (10.231.x.1): forwarders and receivers listen here. */
  hostIp: string;
  /** The namespace's end, where the services listen. */
  nsIp: string;
  /** Further host-end addresses (.3 .. .6), or the link's network address (0). */
  peerIp: (n: 0 | 3 | 4 | 5 | 6) => string;
  /** Replaces the namespace's /etc/hosts (read again on every lookup). */
  hosts(entries: Record<string, string>): void;
  /** A TCP forwarder on hostIp to 127.0.0.1:port (the store and Temporal listen on loopback only). */
  forward(port: number): Promise<number>;
  /** Keeps a server for stop(). */
  own(server: Server): void;
  /** Starts `countersign serve --with-worker` in the namespace and waits until it is ready. */
  serve(env: Record<string, string>, port: number): Promise<NsService>;
  stop(): Promise<void>;
}

export interface NsService {
  url: string;
  port: number;
  child: ChildProcess;
  logs: string[];
  alive(): boolean;
  stop(): Promise<void>;
}

export async function startOutboundNet(): Promise<OutboundNet> {
  const tag = randomBytes(3).toString('hex');
  const name = `csout${tag}`;
  // A /29 in 10.231.0.0/16 picked at random (test/agents/netns.ts uses /30s of the same block).
  const third = 1 + (randomBytes(1)[0]! % 250);
  const base = 8 * (randomBytes(1)[0]! % 31);
  const addr = (n: number) => `10.231.${third}.${base + n}`;
  const etc = `/etc/netns/${name}`;
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const services: NsService[] = [];
  const stop = async () => {
    await Promise.all(services.map((s) => s.stop()));
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    for (const args of [
      ['link', 'del', `cso${tag}`],
      ['netns', 'del', name],
    ]) {
      try {
        ip(...args);
      } catch {
        // already gone
      }
    }
    rmSync(etc, { recursive: true, force: true });
  };
  try {
    ip('netns', 'add', name);
    ip('link', 'add', `cso${tag}`, 'type', 'veth', 'peer', 'name', `csi${tag}`, 'netns', name);
    for (const n of [1, 3, 4, 5, 6]) ip('addr', 'add', `${addr(n)}/29`, 'dev', `cso${tag}`);
    ip('link', 'set', `cso${tag}`, 'up');
    ip('-n', name, 'addr', 'add', `${addr(2)}/29`, 'dev', `csi${tag}`);
    ip('-n', name, 'link', 'set', `csi${tag}`, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'resolv.conf'), 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
    writeFileSync(join(etc, 'hosts'), '127.0.0.1 localhost\n');
  } catch (err) {
    await stop();
    throw err;
  }
  const net: OutboundNet = {
    name,
    hostIp: addr(1),
    nsIp: addr(2),
    peerIp: (n) => addr(n),
    hosts(entries) {
      const lines = ['127.0.0.1 localhost', ...Object.entries(entries).map(([h, a]) => `${a} ${h}`)];
      writeFileSync(join(etc, 'hosts'), `${lines.join('\n')}\n`);
    },
    async forward(port) {
      const server = createServer((inbound) => {
        const outbound = connect(port, '127.0.0.1');
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
        }
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
        inbound.pipe(outbound).pipe(inbound);
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, addr(1), r));
      return (server.address() as { port: number }).port;
    },
    own(server) {
      servers.push(server);
      server.on('connection', (s: Socket) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
    },
    async serve(env, port) {
      const logs: string[] = [];
      const child = spawn('ip', ['netns', 'exec', name, process.execPath, BIN, 'serve', '--with-worker'], {
        env: {
          // Not process.env: vitest sets variables there that are not ours.
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          COUNTERSIGN_RUN: 'sources',
          // Every address of the namespace, its loopback included (an API step's target).
          HOST: '0.0.0.0',
          PORT: String(port),
          BASE_URL: `http://${addr(2)}:${port}`,
          LOG_LEVEL: 'info',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [child.stdout!, child.stderr!])
        stream.on('data', (c: Buffer) => logs.push(String(c)));
      const url = `http://${addr(2)}:${port}`;
      const service: NsService = {
        url,
        port,
        child,
        logs,
        alive: () => child.exitCode === null && child.signalCode === null,
        async stop() {
          if (!service.alive()) return;
          const gone = new Promise((r) => child.once('exit', r));
          // Nothing to keep: the namespace, its store and its task queue go with the test.
          child.kill('SIGKILL');
          await gone;
        },
      };
      services.push(service);
      await until(
        'the service in the namespace to be ready',
        async () => {
          if (!service.alive()) throw new Error(`the service exited:\n${logs.join('').slice(-3000)}`);
          return (await fetch(`${url}/readyz`)).status === 200 ? true : undefined;
        },
        150_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${logs.join('').slice(-3000)}`);
      });
      return service;
    },
    stop,
  };
  return net;
}

/** A CA and a server certificate for `names` (openssl), in a fresh folder. */
export function makeCert(names: string[]): { caFile: string; cert: string; key: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-outbound-tls-'));
  const run = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=outbound test CA',
  );
  run(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    `/CN=${names[0]}`,
  );
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName = ${names.map((n) => `DNS:${n}`).join(',')}\n`);
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { caFile: join(dir, 'ca.crt'), cert: read('server.crt'), key: read('server.key'), dir };
}
