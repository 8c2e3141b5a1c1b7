// The requesting side of a relay (agent/README.md "Replicas"): a process without the agent's
// tunnel (the worker, another API replica) asks the store which process holds it and opens one
// authenticated WebSocket per agent to that process's relay endpoint. Adapters still dial a local
// loopback listener; each accepted socket becomes one stream of the relay link, spoken with the
// tunnel protocol (tunnels/protocol.ts), and the holder forwards it over the agent's tunnel.
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { AdapterError } from '../adapters/errors.ts';
import type { Logger } from '../core/logger.ts';
import { findAgent } from '../store/agents.ts';
import type { Keyring } from '../store/crypto.ts';
import type { Sql } from '../store/db.ts';
import { agentLabel, isConnectedRow, LEASE_MS } from './agent-status.ts';
import { watchLiveness } from './liveness.ts';
import { LoopbackListeners, targetKey } from './loopback.ts';
import { Mux } from './mux.ts';
import { CLOSE, decodeData, parseAgentMessage, type Target, wsPayload } from './protocol.ts';
import { RELAY_SESSION_HEADER, relayPath, relayToken } from './relay-auth.ts';
import { type AgentTunnels, TunnelBook } from './tunnels.ts';

/**
 * How long the holder has to accept the relay link: short, as replicas are on one network and a
 * hung holder must not hold a query for long (the 10 s budget in liveness.ts).
 */
const CONNECT_TIMEOUT_MS = 2_000;
/** How long the holder has to answer an `open` (the agent dials the database meanwhile). */
const OPEN_TIMEOUT_MS = 15_000;
const MAX_PAYLOAD = 1024 * 1024;

interface Link {
  ws: WebSocket;
  mux: Mux;
  pending: Map<number, { socket: Socket; resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout }>;
  draining: boolean;
  holder: Holder;
  /** Why this process ended the link, when it did (the holder went silent). */
  why: string | null;
}

interface Holder {
  label: string;
  sessionId: string;
  /** Its advertised address (tunnels/advertise.ts). */
  url: string;
}

const isHandshakeTimeout = (err: Error) => /handshake has timed out/i.test(err.message);

/** Why a relay connect failed, for the error (never a header or the token). */
function dialFailure(err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return 'which refused the connection (is it running?)';
  if (isHandshakeTimeout(err))
    return `which did not answer within ${CONNECT_TIMEOUT_MS / 1000} s (it may hang or be overloaded)`;
  return `which cannot be reached: ${err.code ?? err.message}`;
}

export interface RelayClientDeps {
  sql: Sql;
  keyring: Keyring;
  logger: Logger;
}

export class RelayClient extends TunnelBook implements AgentTunnels {
  private readonly links = new Map<string, Link>();
  private readonly connecting = new Map<string, Promise<Link>>();
  /**
   * Sessions whose holder went silent here, with why: while the store still names one (the agent
   * has not moved yet, or its lease has not lapsed), calls fail at once instead of waiting on the
   * connect timeout again, and the first call after the agent moved goes to the new holder.
   */
  private readonly silent = new Map<string, { at: number; why: string }>();
  private readonly listeners = new LoopbackListeners();
  private nextStream = 1;

  constructor(private readonly deps: RelayClientDeps) {
    super();
  }

  isConnected(agentId: string): boolean {
    const link = this.links.get(agentId);
    return link !== undefined && !link.draining && link.ws.readyState === WebSocket.OPEN;
  }

  async ready(agentId: string): Promise<void> {
    if (this.isConnected(agentId)) return;
    let attempt = this.connecting.get(agentId);
    if (!attempt) {
      attempt = this.connect(agentId).finally(() => this.connecting.delete(agentId));
      this.connecting.set(agentId, attempt);
    }
    await attempt;
  }

  tunnel(agentId: string, target: Target): Promise<Target> {
    return this.listeners.address(targetKey(agentId, target), (socket) =>
      this.openStream(agentId, target, socket).catch((err: Error) => {
        this.refused(agentId, target, err.message);
        this.deps.logger.info({ agentId, port: target.port, reason: err.message }, 'relayed stream refused');
        socket.destroy();
      }),
    );
  }

  async close(): Promise<void> {
    for (const link of this.links.values()) link.ws.close(CLOSE.goingAway, 'process stopping');
    await this.listeners.closeAll();
  }

  /**
   * Looks up the holder in the store and opens the relay link; every failure names the agent, the
   * holder's address and why. The agent may move while this waits on a holder that hangs or just
   * lost it: when the store names another session by then, that one is tried at once.
   */
  private async connect(agentId: string): Promise<Link> {
    const first = await this.holder(agentId);
    const quiet = this.silent.get(first.sessionId);
    if (quiet && Date.now() - quiet.at < LEASE_MS) throw new AdapterError(quiet.why, 'connection');
    try {
      return await this.dial(agentId, first);
    } catch (err) {
      const now = await this.holder(agentId).catch(() => null);
      if (!now || now.sessionId === first.sessionId) throw err;
      return this.dial(agentId, now);
    }
  }

  /** The session and address the store names for the agent's tunnel, or the clear error. */
  private async holder(agentId: string): Promise<Holder> {
    const row = await findAgent(this.deps.sql, agentId);
    if (!row) throw new AdapterError(`agent ${agentId} is not registered`, 'connection');
    this.names.set(row.id, row.name);
    const label = agentLabel(row.id, row.name);
    if (row.revoked_at) throw new AdapterError(`${label} is revoked`, 'connection');
    // A row whose lease lapsed belongs to a holder that died or hangs: no traffic goes there.
    if (!isConnectedRow(row) || !row.session_id)
      throw new AdapterError(`${label} is not connected`, 'connection');
    if (!row.relay_url)
      throw new AdapterError(
        `${label} is connected to a Countersign process that serves no relay`,
        'connection',
      );
    return { label, sessionId: row.session_id, url: row.relay_url };
  }

  private async dial(agentId: string, holder: Holder): Promise<Link> {
    const { label } = holder;
    const url = new URL(relayPath(agentId), `${holder.url}/`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url, {
      headers: {
        authorization: `Bearer ${relayToken(this.deps.keyring)}`,
        [RELAY_SESSION_HEADER]: holder.sessionId,
      },
      handshakeTimeout: CONNECT_TIMEOUT_MS,
      maxPayload: MAX_PAYLOAD,
    });
    const unreachable = (why: string) =>
      new AdapterError(`${label} is held by the Countersign replica at ${holder.url}, ${why}`, 'connection');
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => {
        ws.terminate();
        const status = res.statusCode ?? 0;
        // 409: the process at that address does not hold that session now: the tunnel just
        // closed, or the address reaches another process (a balancer's, say).
        if (status === 409)
          reject(
            unreachable(
              'which does not hold that tunnel now (it just closed, or the address reaches another process: COUNTERSIGN_INTERNAL_URL must name the replica itself, never the load balancer)',
            ),
          );
        else if (status === 401)
          reject(unreachable('which refused this process (is COUNTERSIGN_ENCRYPTION_KEY the same?)'));
        else reject(unreachable(`which answered ${status}`));
      });
      ws.once('error', (err: NodeJS.ErrnoException) => {
        const failure = unreachable(dialFailure(err));
        if (isHandshakeTimeout(err)) this.markSilent(holder.sessionId, failure.message);
        reject(failure);
      });
    });
    const link: Link = { ws, mux: new Mux(ws), pending: new Map(), draining: false, holder, why: null };
    this.links.get(agentId)?.ws.terminate();
    this.links.set(agentId, link);
    this.bump(agentId);
    // A holder that hangs keeps the TCP connection open: only its silence tells (liveness.ts).
    watchLiveness(ws, (silentMs) => {
      link.why = `${label} is held by the Countersign replica at ${holder.url}, which stopped answering (nothing for ${Math.round(silentMs / 1000)} s)`;
      this.markSilent(holder.sessionId, link.why);
      ws.terminate();
    });
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => this.onMessage(agentId, link, data, isBinary));
    ws.on('close', (code) => this.detach(agentId, link, code));
    return link;
  }

  private markSilent(sessionId: string, why: string): void {
    for (const [id, q] of this.silent) if (Date.now() - q.at >= LEASE_MS) this.silent.delete(id);
    this.silent.set(sessionId, { at: Date.now(), why });
  }

  private async openStream(agentId: string, target: Target, socket: Socket): Promise<void> {
    await this.ready(agentId);
    const link = this.links.get(agentId)!;
    const id = this.nextStream++;
    if (this.nextStream > 0xffffffff) this.nextStream = 1;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        link.pending.delete(id);
        reject(new Error(`${this.label(agentId)} did not open ${target.host}:${target.port} in time`));
      }, OPEN_TIMEOUT_MS);
      link.pending.set(id, { socket, resolve, reject, timer });
      link.mux.control({ type: 'open', stream: id, host: target.host, port: target.port });
    });
  }

  private onMessage(agentId: string, link: Link, data: WebSocket.RawData, isBinary: boolean): void {
    const buf = wsPayload(data);
    if (isBinary) {
      const frame = decodeData(buf);
      if (frame) link.mux.receive(frame.stream, frame.payload);
      return;
    }
    const msg = parseAgentMessage(buf.toString('utf8'));
    if (!msg) return void link.ws.close(CLOSE.protocol, 'bad control frame');
    if (msg.type === 'draining') {
      link.draining = true;
      this.notify(agentId);
      return;
    }
    if (msg.type === 'opened' || msg.type === 'refused') {
      const p = link.pending.get(msg.stream);
      if (!p) return;
      link.pending.delete(msg.stream);
      clearTimeout(p.timer);
      // Synchronously, as in hub.ts: the next frame may already carry the database's first bytes.
      if (msg.type === 'opened') {
        link.mux.attach(msg.stream, p.socket);
        p.resolve();
      } else p.reject(new Error(`refused by ${this.label(agentId)}: ${msg.reason}`));
      return;
    }
    link.mux.onMessage(msg);
  }

  private detach(agentId: string, link: Link, code: number): void {
    const reason =
      code === CLOSE.agentGone
        ? `${this.label(agentId)} disconnected`
        : (link.why ??
          `${this.label(agentId)} disconnected: the relay to the Countersign replica at ${link.holder.url} holding its tunnel closed`);
    this.lost(agentId, reason);
    link.mux.destroyAll(reason);
    for (const p of link.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(reason));
    }
    link.pending.clear();
    if (this.links.get(agentId) !== link) return;
    this.links.delete(agentId);
    this.bump(agentId);
    this.notify(agentId);
  }
}
