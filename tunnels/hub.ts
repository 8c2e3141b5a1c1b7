// The service side of agent tunnels (agent/README.md). Each connected agent has one session (its
// WebSocket and the streams on it). A database behind an agent is reached through a loopback
// listener per (agent, host, port): the adapter dials 127.0.0.1:<port> while TLS still names the
// database's real hostname (adapters/types.ts `dial`), and every accepted socket becomes one
// stream the agent relays. Drivers, TLS and the governed pipeline do not know the tunnel exists.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { AdapterError } from '../adapters/errors.ts';
import type { Logger } from '../core/logger.ts';
import {
  type AgentRow,
  findAgent,
  listAgentTargets,
  markAgentConnected,
  markAgentDisconnected,
  renewAgentLeases,
} from '../store/agents.ts';
import type { Sql } from '../store/db.ts';
import { agentLabel, isConnectedRow, LEASE_RENEW_MS } from './agent-status.ts';
import { LoopbackListeners, targetKey } from './loopback.ts';
import { Mux } from './mux.ts';
import {
  type AgentMessage,
  CLOSE,
  decodeData,
  isAllowed,
  parseAgentMessage,
  type Target,
  wsPayload,
} from './protocol.ts';
import { type AgentTunnels, TunnelBook } from './tunnels.ts';

export type { AgentTunnels } from './tunnels.ts';

/** How long an agent has to answer an `open` before the stream fails. */
const OPEN_TIMEOUT_MS = 15_000;

interface Pending {
  socket: Socket;
  resolve(): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

class Session {
  readonly mux: Mux;
  readonly pending = new Map<number, Pending>();
  allowed: Target[] = [];
  /** Set once the hello (with the allowlist) went out. */
  ready = false;
  draining = false;
  alive = true;
  /** Recorded in the store with the relay URL: relays must name it (relay-server.ts). */
  readonly id = randomUUID();
  constructor(
    readonly agent: AgentRow,
    readonly ws: WebSocket,
  ) {
    this.mux = new Mux(ws);
  }
}

export class AgentHub extends TunnelBook implements AgentTunnels {
  private readonly sessions = new Map<string, Session>();
  private readonly listeners = new LoopbackListeners();
  private readonly timer: NodeJS.Timeout;
  private readonly leaseTimer: NodeJS.Timeout;
  private nextStream = 1;
  /**
   * Set in processes that relay (cli/boot.ts): pools and check-connection given this hub send
   * their calls through this router, which uses the hub for tunnels held here and relays otherwise.
   */
  via: AgentTunnels | null = null;

  constructor(
    private readonly deps: { sql: Sql; logger: Logger },
    readonly heartbeatMs = 15_000,
  ) {
    super();
    this.timer = setInterval(() => void this.heartbeat(), heartbeatMs);
    this.timer.unref();
    // The lease is apart from the heartbeat: it must be short for a hung holder to be noticed
    // within seconds, and it costs one statement per interval for every agent held here.
    this.leaseTimer = setInterval(() => void this.renewLeases(), LEASE_RENEW_MS);
    this.leaseTimer.unref();
  }

  /**
   * Takes over an authenticated WebSocket as `agent`'s tunnel (a newer one replaces an older one).
   * `relayUrl`: where other Countersign processes reach this one to relay through it (null: nowhere).
   */
  async attach(
    agent: AgentRow,
    ws: WebSocket,
    version: string | null,
    relayUrl: string | null = null,
  ): Promise<void> {
    const previous = this.sessions.get(agent.id);
    if (previous) previous.ws.close(CLOSE.replaced, 'replaced by a newer connection');
    const session = new Session(agent, ws);
    this.sessions.set(agent.id, session);
    this.names.set(agent.id, agent.name);
    this.bump(agent.id);
    // Pools drop connections that rode a replaced tunnel (tunnels/pools.ts).
    if (previous) this.notify(agent.id);
    ws.on('pong', () => {
      session.alive = true;
    });
    ws.on('message', (data, isBinary) => this.onMessage(session, data, isBinary));
    ws.on('error', () => {}); // followed by 'close'
    ws.on('close', () => void this.detach(session));
    session.allowed = await listAgentTargets(this.deps.sql, agent.id);
    await markAgentConnected(this.deps.sql, agent.id, version, { id: session.id, relayUrl });
    session.mux.control({
      type: 'hello',
      agent_id: agent.id,
      name: agent.name,
      allowed: session.allowed,
      heartbeat_ms: this.heartbeatMs,
    });
    session.ready = true;
    this.deps.logger.info({ agentId: agent.id, version }, 'agent connected');
  }

  isConnected(agentId: string): boolean {
    const s = this.sessions.get(agentId);
    return s?.ready === true && !s.draining && s.ws.readyState === s.ws.OPEN;
  }

  async ready(agentId: string): Promise<void> {
    if (!this.isConnected(agentId)) throw await this.unavailable(agentId);
  }

  /** The live session of the agent here, if any (relay-server.ts checks relays against it). */
  sessionId(agentId: string): string | null {
    return this.isConnected(agentId) ? (this.sessions.get(agentId)?.id ?? null) : null;
  }

  /** True while the agent's tunnel here is draining. */
  isDraining(agentId: string): boolean {
    return this.sessions.get(agentId)?.draining === true;
  }

  /** The clear error for an agent that cannot carry traffic here now. */
  async unavailable(agentId: string): Promise<AdapterError> {
    const row = await findAgent(this.deps.sql, agentId);
    if (!row) return new AdapterError(`agent ${agentId} is not registered`, 'connection');
    this.names.set(row.id, row.name);
    const label = agentLabel(row.id, row.name);
    if (row.revoked_at) return new AdapterError(`${label} is revoked`, 'connection');
    if (this.sessions.get(agentId)?.draining)
      return new AdapterError(`${label} is shutting down`, 'connection');
    if (isConnectedRow(row))
      return new AdapterError(
        `${label} is connected to another Countersign process, not this one (agent/README.md "Replicas")`,
        'connection',
      );
    return new AdapterError(`${label} is not connected`, 'connection');
  }

  tunnel(agentId: string, target: Target): Promise<Target> {
    return this.listeners.address(targetKey(agentId, target), (socket) =>
      this.openStream(agentId, target, socket).catch((err: Error) => {
        this.deps.logger.info({ agentId, port: target.port, reason: err.message }, 'agent stream refused');
        socket.destroy();
      }),
    );
  }

  /**
   * A stream to `target` through the agent. The agent enforces its allowlist; the service's own
   * rule is that targets come from database rows (pools.ts), so nothing here re-checks it.
   */
  async openStream(agentId: string, target: Target, socket: Socket): Promise<void> {
    const session = this.sessions.get(agentId);
    if (!session || !this.isConnected(agentId)) throw await this.unavailable(agentId);
    // A target that is new since the last allowlist (a database just assigned): refresh first.
    if (!isAllowed(session.allowed, target.host, target.port)) await this.refreshAllowed(session);
    const id = this.nextStream++;
    if (this.nextStream > 0xffffffff) this.nextStream = 1;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        session.pending.delete(id);
        reject(new Error(`${this.label(agentId)} did not open ${target.host}:${target.port} in time`));
      }, OPEN_TIMEOUT_MS);
      session.pending.set(id, { socket, resolve, reject, timer });
      session.mux.control({ type: 'open', stream: id, host: target.host, port: target.port });
    }).catch((err: Error) => {
      this.refused(agentId, target, err.message);
      throw err;
    });
  }

  /** Cuts an agent's tunnel (revocation, or tests simulating a network drop). */
  disconnect(agentId: string, code: number = CLOSE.revoked, reason = 'revoked'): void {
    const s = this.sessions.get(agentId);
    if (!s) return;
    if (code === CLOSE.revoked) s.ws.close(code, reason);
    else s.ws.terminate();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.leaseTimer);
    for (const s of this.sessions.values()) s.ws.close(CLOSE.goingAway, 'service stopping');
    await this.listeners.closeAll();
  }

  private onMessage(session: Session, data: WebSocket.RawData, isBinary: boolean): void {
    const buf = wsPayload(data);
    if (isBinary) {
      const frame = decodeData(buf);
      if (frame) session.mux.receive(frame.stream, frame.payload);
      return;
    }
    const msg: AgentMessage | null = parseAgentMessage(buf.toString('utf8'));
    if (!msg) {
      session.ws.close(CLOSE.protocol, 'bad control frame');
      return;
    }
    if (msg.type === 'draining') {
      session.draining = true;
      // Pools let go of their idle connections so the agent's drain ends when queries do.
      this.notify(session.agent.id);
      return;
    }
    if (msg.type === 'opened' || msg.type === 'refused') {
      const p = session.pending.get(msg.stream);
      if (!p) return;
      session.pending.delete(msg.stream);
      clearTimeout(p.timer);
      // Attached here, synchronously: the agent's first bytes (a MySQL greeting) may be in the
      // very next frame, handled before any promise continuation could run.
      if (msg.type === 'opened') {
        session.mux.attach(msg.stream, p.socket);
        p.resolve();
      } else
        p.reject(new Error(`refused by ${agentLabel(session.agent.id, session.agent.name)}: ${msg.reason}`));
      return;
    }
    session.mux.onMessage(msg);
  }

  private async detach(session: Session): Promise<void> {
    const label = agentLabel(session.agent.id, session.agent.name);
    session.mux.destroyAll(`${label} disconnected`);
    for (const p of session.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(`${label} disconnected`));
    }
    session.pending.clear();
    if (this.sessions.get(session.agent.id) !== session) return; // replaced by a newer session
    this.sessions.delete(session.agent.id);
    this.bump(session.agent.id);
    this.notify(session.agent.id);
    this.deps.logger.info({ agentId: session.agent.id }, 'agent disconnected');
    await markAgentDisconnected(this.deps.sql, session.agent.id, session.id).catch(() => {});
  }

  private async refreshAllowed(session: Session): Promise<void> {
    session.allowed = await listAgentTargets(this.deps.sql, session.agent.id);
    session.mux.control({ type: 'allow', allowed: session.allowed });
  }

  private async renewLeases(): Promise<void> {
    const held = [...this.sessions.values()]
      .filter((s) => s.ready)
      .map((s) => ({ agentId: s.agent.id, sessionId: s.id }));
    await renewAgentLeases(this.deps.sql, held).catch((err: Error) =>
      this.deps.logger.warn({ err: err.message }, 'agent lease renewal failed'),
    );
  }

  /** Pings every session; one that missed the previous ping is cut. Also re-reads revocation and targets. */
  private async heartbeat(): Promise<void> {
    for (const session of [...this.sessions.values()]) {
      if (!session.alive) {
        session.ws.terminate();
        continue;
      }
      session.alive = false;
      session.ws.ping();
      try {
        const row = await findAgent(this.deps.sql, session.agent.id);
        // A revocation made on another replica reaches this one within a heartbeat.
        if (!row || row.revoked_at) {
          session.ws.close(CLOSE.revoked, 'revoked');
          continue;
        }
        await this.refreshAllowed(session);
      } catch (err) {
        this.deps.logger.warn(
          { agentId: session.agent.id, err: (err as Error).message },
          'agent heartbeat bookkeeping failed',
        );
      }
    }
  }
}
