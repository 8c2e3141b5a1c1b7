import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import type { AppEnv } from '../env.ts';
import { authenticateMcp } from './auth.ts';
import { createMcpServer } from './server.ts';

/**
 * POST /mcp: MCP over streamable HTTP (protocol 2025-11-25), stateless. Every request is
 * authenticated on its own and gets a fresh server and transport, so no MCP session lives in
 * process memory and the api process scales out (DESIGN.md Processes).
 */
export function mcpRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const allowedOrigin = new URL(deps.config.baseUrl).origin;

  app.all('/mcp', async (c) => {
    // MCP transports 2025-11-25 §Security Warning: servers MUST validate Origin (DNS rebinding);
    // an invalid Origin gets 403. Server-side clients send none; browsers on our own origin may.
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== allowedOrigin) {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Origin not allowed' }, id: null },
        403,
      );
    }
    const caller = await authenticateMcp(deps, c.req.header('authorization'));
    if ('challenge' in caller) {
      c.header('www-authenticate', caller.challenge);
      return c.json(caller.body, caller.status);
    }
    c.set('principal', caller.principal);
    // Streamable HTTP: a stateless server offers no standalone SSE stream and no session to end.
    if (c.req.method !== 'POST') {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null },
        405,
        { allow: 'POST' },
      );
    }
    const server = createMcpServer(deps, caller);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, {
        authInfo: {
          token: '',
          clientId: caller.client.id,
          scopes: caller.scopes,
          extra: { userId: caller.principal.userId },
        },
      });
    } finally {
      await server.close();
    }
  });
  return app;
}
