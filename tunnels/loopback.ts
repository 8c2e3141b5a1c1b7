// Loopback listeners, one per (agent, host, port): an adapter dials 127.0.0.1:<port> and every
// accepted socket is handed to `onSocket` (a stream over the agent's tunnel, or over a relay to the
// process holding it). Shared by the hub (hub.ts) and the relay client (relay-client.ts).
import { createServer, type Server, type Socket } from 'node:net';
import type { Target } from './protocol.ts';

interface Listener {
  server: Server;
  address: Target;
}

export class LoopbackListeners {
  private readonly listeners = new Map<string, Promise<Listener>>();

  /** The loopback address for `key`, created on first use; accepted sockets go to `onSocket`. */
  async address(key: string, onSocket: (socket: Socket) => void): Promise<Target> {
    let listener = this.listeners.get(key);
    if (!listener) {
      listener = listen(onSocket);
      this.listeners.set(key, listener);
      listener.catch(() => this.listeners.delete(key));
    }
    return (await listener).address;
  }

  async closeAll(): Promise<void> {
    const listeners = await Promise.allSettled(this.listeners.values());
    for (const l of listeners) if (l.status === 'fulfilled') l.value.server.close();
    this.listeners.clear();
  }
}

/** `agent|host|port`, hosts compared case-insensitively as DNS names are. */
export function targetKey(agentId: string, target: Target): string {
  return `${agentId}|${target.host.toLowerCase()}|${target.port}`;
}

function listen(onSocket: (socket: Socket) => void): Promise<Listener> {
  const server = createServer({ pauseOnConnect: true }, (socket) => {
    socket.on('error', () => {});
    onSocket(socket);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: the listener is an in-process detail (agent/README.md "Security").
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      const { port } = server.address() as { port: number };
      resolve({ server, address: { host: '127.0.0.1', port } });
    });
  });
}
