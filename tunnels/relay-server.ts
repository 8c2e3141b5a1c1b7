// The holding side of a relay (agent/README.md "Replicas"). Another Countersign process (a worker,
// another API replica) opened an authenticated WebSocket to this one for an agent whose tunnel is
// held here. Towards it, this process plays the agent: it answers `open` with `opened` or
// `refused`, and each opened stream is a loopback connection to this hub's own listener for the
// target, which the hub relays over the agent's tunnel. Bytes only: TLS to the database runs end
// to end between the requesting process and the database.
import { connect, type Socket } from 'node:net';
import type WebSocket from 'ws';
import type { Logger } from '../core/logger.ts';
import { listAgentTargets } from '../store/agents.ts';
import type { Sql } from '../store/db.ts';
import type { AgentHub } from './hub.ts';
import { Mux } from './mux.ts';
import { CLOSE, isAllowed, readServerFrame, type Target } from './protocol.ts';

export interface RelayServerDeps {
  sql: Sql;
  logger: Logger;
  agents: AgentHub;
}

/** Serves one relay link for `agentId` until either side closes it. */
export function serveRelay(deps: RelayServerDeps, agentId: string, ws: WebSocket): void {
  const mux = new Mux(ws);
  const generation = deps.agents.generation(agentId);
  let sentDraining = false;
  // The agent's tunnel ending here ends the relay: the requester fails its calls at once.
  const unwatch = deps.agents.watch(agentId, () => {
    if (deps.agents.generation(agentId) !== generation) ws.close(CLOSE.agentGone, 'agent disconnected');
    else if (deps.agents.isDraining(agentId) && !sentDraining) {
      sentDraining = true;
      mux.control({ type: 'draining' });
    }
  });
  ws.on('error', () => {});
  ws.on('close', () => {
    unwatch();
    mux.destroyAll('relay closed');
  });
  ws.on('message', (data, isBinary) => {
    const frame = readServerFrame(data, isBinary, mux);
    if (!frame) return;
    const msg = frame.control;
    if (!msg || msg.type === 'hello' || msg.type === 'allow') {
      ws.close(CLOSE.protocol, 'bad control frame');
      return;
    }
    if (msg.type === 'open') {
      void open(deps, agentId, mux, msg.stream, { host: msg.host, port: msg.port });
      return;
    }
    mux.onMessage(msg);
  });
}

async function open(deps: RelayServerDeps, agentId: string, mux: Mux, stream: number, target: Target) {
  const refuse = (reason: string) => mux.control({ type: 'refused', stream, reason });
  try {
    if (!deps.agents.isConnected(agentId)) return refuse('the agent is no longer connected here');
    // The allowlist applies to relayed streams too (agent/README.md "Security"): only targets of
    // databases assigned to the agent, read fresh from the store. The agent checks again.
    const allowed = await listAgentTargets(deps.sql, agentId);
    if (!isAllowed(allowed, target.host, target.port))
      return refuse(`${target.host}:${target.port} is not assigned to this agent`);
    const address = await deps.agents.tunnel(agentId, target);
    const socket: Socket = connect(address.port, address.host);
    const failed = (err: Error) => refuse(err.message);
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.removeListener('error', failed);
      // Attached before `opened` goes out: the requester writes only after it has seen `opened`.
      mux.attach(stream, socket);
      mux.control({ type: 'opened', stream });
    });
  } catch (err) {
    refuse((err as Error).message);
  }
}
