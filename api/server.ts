import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Deps } from '../core/deps.ts';
import { advertisedUrl } from '../tunnels/advertise.ts';
import { attachAgentEndpoint } from './agents/connect.ts';
import { createApp } from './app.ts';
import { trackRequests } from './drain.ts';
import { type Fetch, mcpDoor } from './mcp/door.ts';

export interface RunningApi {
  url: string;
  port: number;
  /**
   * Stops the way a load balancer needs (api/drain.ts): readiness fails at once, the listener
   * closes after `delayMs`, requests in flight get up to `graceMs` to finish.
   */
  drain(opts: { delayMs: number; graceMs: number }): Promise<void>;
  close(): Promise<void>;
}

/** Serves the app on HOST:PORT (port 0 picks a free one, as tests do). */
export async function startApi(deps: Deps): Promise<RunningApi> {
  const app = createApp(deps);
  let requests: ReturnType<typeof trackRequests> | undefined;
  // A draining replica fails its readiness probe before anything else changes, so balancers
  // take it out of rotation while it still answers everything sent to it meanwhile.
  // Plain MCP tool calls are answered in front of the router (api/mcp/door.ts).
  const routed = mcpDoor(deps, app.fetch);
  const fetch: Fetch = (req, env) =>
    requests?.draining && new URL(req.url).pathname === '/readyz'
      ? Response.json({ status: 'draining', checks: { process: 'shutting down' } }, { status: 503 })
      : routed(req, env);
  return new Promise((resolve, reject) => {
    let closeTunnels = () => {};
    // Known once the listener is bound (PORT=0 picks the port); no agent can connect before.
    let relayUrl: string | null = null;
    const server = serve(
      { fetch, hostname: deps.config.host, port: deps.config.port },
      (info: AddressInfo) => {
        const { config } = deps;
        relayUrl = advertisedUrl({ ...config, port: info.port });
        if (deps.agents) deps.logger.info({ relayUrl }, 'agent relays reach this process here');
        const tracked = trackRequests(server as Server, deps.logger);
        requests = tracked;
        const drain = async (opts: { delayMs: number; graceMs: number }) => {
          // Agent tunnels last as long as the requests that may run through them.
          await tracked.drain({ ...opts, beforeForcedClose: () => closeTunnels() });
          closeTunnels();
        };
        resolve({
          url: `http://${deps.config.host}:${info.port}`,
          port: info.port,
          drain,
          close: () => drain({ delayMs: 0, graceMs: 0 }),
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
        relayUrl: () => relayUrl,
      });
    server.once('error', reject);
  });
}
