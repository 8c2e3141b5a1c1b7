// The tunnel endpoint: agents upgrade GET /api/v1/agents/connect to a WebSocket, authenticated by
// their token before the upgrade completes, and the hub takes the socket over. The same server
// carries relays from other Countersign processes (relay.ts).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Logger } from '../../core/logger.ts';
import { authenticateAgent } from '../../registry/agents.ts';
import type { Keyring } from '../../store/crypto.ts';
import type { Sql } from '../../store/db.ts';
import type { AgentHub } from '../../tunnels/hub.ts';
import { AGENT_CONNECT_PATH, AGENT_VERSION_HEADER } from '../../tunnels/protocol.ts';
import { parseRelayPath } from '../../tunnels/relay-auth.ts';
import { handleRelayUpgrade } from './relay.ts';

/** Largest frame accepted from an agent (the agent splits data into 256 KiB chunks). */
const MAX_PAYLOAD = 1024 * 1024;

function refuse(socket: Duplex, status: 401 | 404 | 409 | 500, text: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${text.length}\r\n\r\n${text}`,
  );
}

/** Handles upgrades on `server`; returns a function that closes every tunnel it accepted. */
export function attachAgentEndpoint(
  server: Server,
  deps: { sql: Sql; logger: Logger; keyring: Keyring; agents: AgentHub; relayUrl: () => string | null },
): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const path = new URL(req.url ?? '/', 'http://agent').pathname;
    const relayed = parseRelayPath(path);
    if (relayed !== null) return handleRelayUpgrade(wss, deps, relayed, req, socket, head, refuse);
    if (path !== AGENT_CONNECT_PATH) return refuse(socket, 404, 'Not Found');
    // RFC 6750 §2.1: the token travels as `Authorization: Bearer`, never in the URL.
    const m = /^Bearer ([^\s]+)$/.exec(req.headers.authorization ?? '');
    void (async () => {
      const agent = m ? await authenticateAgent(deps.sql, m[1]!) : null;
      if (!agent) {
        deps.logger.info({ route: AGENT_CONNECT_PATH, status: 401 }, 'agent tunnel refused');
        return refuse(socket, 401, 'Unauthorized');
      }
      const raw = req.headers[AGENT_VERSION_HEADER];
      const version = typeof raw === 'string' ? raw.slice(0, 64) : null;
      wss.handleUpgrade(req, socket, head, (ws) => {
        deps.agents.attach(agent, ws, version, deps.relayUrl()).catch((err: Error) => {
          deps.logger.error({ agentId: agent.id, err: err.message }, 'agent attach failed');
          ws.terminate();
        });
      });
    })().catch((err: Error) => {
      deps.logger.error({ err: err.message }, 'agent upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  });
  return () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  };
}
