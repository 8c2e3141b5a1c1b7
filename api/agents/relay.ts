// The relay endpoint: another Countersign process upgrades GET /internal/agents/:id/relay to reach
// an agent whose tunnel this process holds (agent/README.md "Replicas"). Refused before the
// upgrade: a wrong relay token (401), or an agent whose named session is not live here (409).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { Logger } from '../../core/logger.ts';
import type { Keyring } from '../../store/crypto.ts';
import type { Sql } from '../../store/db.ts';
import type { AgentHub } from '../../tunnels/hub.ts';
import { RELAY_SESSION_HEADER, relayTokenMatches } from '../../tunnels/relay-auth.ts';
import { serveRelay } from '../../tunnels/relay-server.ts';

export interface RelayEndpointDeps {
  sql: Sql;
  logger: Logger;
  keyring: Keyring;
  agents: AgentHub;
}

export function handleRelayUpgrade(
  wss: WebSocketServer,
  deps: RelayEndpointDeps,
  agentId: string,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  refuse: (socket: Duplex, status: 401 | 409, text: string) => void,
): void {
  // The token is derived from the shared encryption key (tunnels/relay-auth.ts) and
  // travels only in the Authorization header (RFC 6750 §2.1), never in the URL or a log line.
  if (!relayTokenMatches(deps.keyring, req.headers.authorization)) {
    deps.logger.warn({ route: 'agent relay', status: 401 }, 'agent relay refused');
    refuse(socket, 401, 'Unauthorized');
    return;
  }
  // The caller read the session from the store; a different or missing one here means the row is
  // stale (this process restarted, or the agent moved): no stream may go into a void.
  const session = req.headers[RELAY_SESSION_HEADER];
  const live = deps.agents.sessionId(agentId);
  if (live === null || session !== live) {
    refuse(socket, 409, 'Conflict');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => serveRelay(deps, agentId, ws));
}
