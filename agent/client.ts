// The agent process: one outbound WebSocket to the service, reconnected with capped exponential
// backoff and full jitter after a drop, relaying the TCP streams the service opens to the hosts
// and ports it allowed (and nothing else). SIGTERM/SIGINT drain: no new streams, open ones
// finish (up to a grace period), then the tunnel closes.
import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import WebSocket from 'ws';
import { watchLiveness } from '../tunnels/liveness.ts';
import { Mux } from '../tunnels/mux.ts';
import {
  AGENT_CONNECT_PATH,
  AGENT_VERSION_HEADER,
  CLOSE,
  isAllowed,
  readServerFrame,
  type ServerMessage,
  type Target,
} from '../tunnels/protocol.ts';

export const AGENT_VERSION = '0.1.0';
const HANDSHAKE_TIMEOUT_MS = 5_000;

export interface AgentOptions {
  /** Base URL of the service (https in production). */
  server: string;
  token: string;
  /** PEM of a private CA the service's certificate chains to (else the system roots). */
  ca?: string;
  /** Plain ws:// to a non-loopback address: only for a link that is already private and encrypted. */
  allowPlainHttp?: boolean;
  /** How long a drain waits for open streams. */
  drainSeconds?: number;
  /** Backoff bounds. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How long a relayed TCP connect may take. */
  connectTimeoutMs?: number;
  log?: (event: string, fields?: Record<string, unknown>) => void;
}

/** Why the agent stopped for good (a refused token is not retried). */
export class AgentRefusedError extends Error {}

export interface RunningAgent {
  /** Resolves when the agent has stopped; rejects with AgentRefusedError when the token is refused. */
  done: Promise<void>;
  /** Graceful stop: drain, close. */
  stop(): Promise<void>;
}

/** Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"): uniform in [0, cap]. */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random = Math.random): number {
  const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 20));
  return Math.max(minMs / 2, Math.floor(random() * cap));
}

/** The WebSocket URL for a service base URL; plain ws only to loopback (the token must not travel in clear). */
export function connectUrl(server: string, allowPlainHttp = false): string {
  const url = new URL(AGENT_CONNECT_PATH, server);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') {
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (!loopback && !allowPlainHttp)
      throw new Error(
        '--server must be https:// (plain http only to a loopback address, or with --allow-plain-http)',
      );
    url.protocol = 'ws:';
  } else throw new Error('--server must be an http(s) URL');
  return url.toString();
}

export function startAgent(opts: AgentOptions): RunningAgent {
  const log = opts.log ?? (() => {});
  const url = connectUrl(opts.server, opts.allowPlainHttp);
  const minMs = opts.minBackoffMs ?? 500;
  const maxMs = opts.maxBackoffMs ?? 30_000;
  let stopping = false;
  let current: { ws: WebSocket; mux: Mux } | null = null;
  let wake: (() => void) | null = null;

  const once = () =>
    new Promise<'closed' | 'refused'>((resolve) => {
      const ws = new WebSocket(url, {
        headers: { authorization: `Bearer ${opts.token}`, [AGENT_VERSION_HEADER]: AGENT_VERSION },
        ...(opts.ca ? { ca: opts.ca } : {}),
        // A replica that accepts TCP but never answers (hung behind the balancer) must not hold
        // the reconnect for long.
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        maxPayload: 1024 * 1024,
      });
      const mux = new Mux(ws);
      let allowed: Target[] = [];
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        ws.terminate();
        if (status === 401 || status === 403) resolve('refused');
        else log('connect failed', { status });
      });
      ws.on('open', () => {
        current = { ws, mux };
        // The replica at the other end may hang with the connection open (stopped, frozen, cut
        // off behind the balancer): its silence ends the tunnel, and the reconnect goes through
        // the balancer to a live replica (tunnels/liveness.ts).
        watchLiveness(ws, (silentMs) => {
          log('service silent', { silent_ms: silentMs });
          ws.terminate();
        });
      });
      ws.on('message', (data, isBinary) => {
        const frame = readServerFrame(data, isBinary, mux);
        if (!frame) return;
        const msg = frame.control;
        if (!msg) {
          ws.close(CLOSE.protocol, 'bad control frame');
          return;
        }
        if (msg.type === 'hello') {
          allowed = msg.allowed;
          log('connected', { agent: msg.agent_id, name: msg.name, targets: allowed.length });
        } else if (msg.type === 'allow') allowed = msg.allowed;
        else if (msg.type === 'open') openStream(mux, msg, allowed);
        else mux.onMessage(msg);
      });
      ws.on('error', (err) => log('tunnel error', { error: err.message }));
      ws.on('close', (code, reason) => {
        mux.destroyAll('the tunnel closed');
        if (current?.ws === ws) current = null;
        if (code !== 1006 || reason.length > 0) log('disconnected', { code, reason: reason.toString() });
        resolve(code === CLOSE.revoked ? 'refused' : 'closed');
      });
    });

  const openStream = (mux: Mux, msg: Extract<ServerMessage, { type: 'open' }>, allowed: Target[]) => {
    // The allowlist is the agent's own guard: a compromised or confused service still cannot
    // use the agent to reach anything but the databases assigned to it (agent/README.md "Security").
    if (!isAllowed(allowed, msg.host, msg.port)) {
      log('refused', { host: msg.host, port: msg.port });
      mux.control({
        type: 'refused',
        stream: msg.stream,
        reason: `${msg.host}:${msg.port} is not assigned to this agent`,
      });
      return;
    }
    if (stopping) {
      mux.control({ type: 'refused', stream: msg.stream, reason: 'the agent is shutting down' });
      return;
    }
    const socket = netConnect({ host: msg.host, port: msg.port });
    socket.setNoDelay(true);
    socket.setTimeout(opts.connectTimeoutMs ?? 10_000, () =>
      socket.destroy(new Error(`connect timed out after ${(opts.connectTimeoutMs ?? 10_000) / 1000} s`)),
    );
    socket.pause();
    const failed = (err: Error) => {
      const code = (err as NodeJS.ErrnoException).code;
      mux.control({
        type: 'refused',
        stream: msg.stream,
        reason: `${msg.host}:${msg.port}: ${code ?? err.message}`,
      });
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.off('error', failed);
      socket.setKeepAlive(true, 30_000);
      mux.attach(msg.stream, socket);
      mux.control({ type: 'opened', stream: msg.stream });
    });
  };

  const done = (async () => {
    let attempt = 0;
    while (!stopping) {
      const started = Date.now();
      const outcome = await once();
      if (outcome === 'refused')
        throw new AgentRefusedError('the service refused the agent token (wrong or revoked)');
      if (stopping) break;
      // A tunnel that stayed up for a while resets the backoff.
      attempt = Date.now() - started > 30_000 ? 0 : attempt + 1;
      const delay = backoffDelay(attempt, minMs, maxMs);
      log('reconnecting', { in_ms: delay, attempt });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();

  const stop = async () => {
    if (stopping) return done.catch(() => {});
    stopping = true;
    wake?.();
    const live = current as { ws: WebSocket; mux: Mux } | null;
    if (live) {
      live.mux.control({ type: 'draining' });
      const deadline = Date.now() + (opts.drainSeconds ?? 30) * 1000;
      while (live.mux.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      live.ws.close(CLOSE.goingAway, 'agent stopping');
    }
    await done.catch(() => {});
  };

  return { done, stop };
}

/** Reads a CA file for --ca. */
export const readCa = (path: string): string => readFileSync(path, 'utf8');
