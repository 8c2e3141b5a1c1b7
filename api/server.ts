import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Deps } from '../core/deps.ts';
import { attachAgentEndpoint } from './agents/connect.ts';
import { createApp } from './app.ts';

export interface RunningApi {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves the app on HOST:PORT (port 0 picks a free one, as tests do). */
export async function startApi(deps: Deps): Promise<RunningApi> {
  const app = createApp(deps);
  return new Promise((resolve, reject) => {
    let closeTunnels = () => {};
    const server = serve(
      { fetch: app.fetch, hostname: deps.config.host, port: deps.config.port },
      (info: AddressInfo) => {
        resolve({
          url: `http://${deps.config.host}:${info.port}`,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              closeTunnels();
              server.close(() => done());
              // Keep-alive sockets would hold close() open; end them.
              (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    // Agent tunnels arrive as WebSocket upgrades on the same server (agent/README.md).
    if (deps.agents)
      closeTunnels = attachAgentEndpoint(server as Server, {
        sql: deps.sql,
        logger: deps.logger,
        keyring: deps.keyring,
        agents: deps.agents,
        // Recorded with the agent's session so workers and other replicas can relay through us.
        relayUrl: deps.config.internalUrl,
      });
    server.once('error', reject);
  });
}
