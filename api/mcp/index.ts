import {
  type AuthInfo,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Deps } from '../../core/deps.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import type { AppEnv } from '../env.ts';
import { queryOnly } from '../middleware/access-settled.ts';
import { API_BODY_BYTES } from '../middleware/body-limit.ts';
import { authenticateMcpRequest } from './auth.ts';
import { createMcpServer } from './server.ts';
import { answerToolCall, plainToolCall } from './tool-call.ts';

/**
 * /mcp: MCP over streamable HTTP, one endpoint for both protocol revisions.
 *
 * - 2026-07-28 (a request whose `_meta` names the revision): the stateless core. No
 *   `initialize`, no `Mcp-Session-Id`; `server/discover`; the `Mcp-Method`/`Mcp-Name` headers
 *   checked against the body; `ttlMs`/`cacheScope` on list results (transports 2026-07-28
 *   §Standard MCP Request Headers, utilities/caching).
 * - 2025-11-25 (anything else): the stateless streamable HTTP of that revision: `initialize`
 *   answered without a session id, every later request served on its own.
 *
 * The SDK (@modelcontextprotocol/server 2.x) makes the routing decision (`isLegacyRequest`) and
 * serves the new revision (`createMcpHandler`); the 2025-11-25 leg is its streamable HTTP
 * transport wired here, in JSON-response mode (see `serveLegacy`). Both legs build their server
 * with the one factory, so both revisions show the same tools. Every request is authenticated on
 * its own and served by a fresh server: no MCP state lives in process memory and the api process
 * scales out (DESIGN.md Processes).
 */
export function mcpRoutes(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const allowedOrigin = new URL(deps.config.baseUrl).origin;
  // Legacy traffic never reaches this handler (routed below), hence 'reject'.
  const modern = createMcpHandler(({ authInfo }) => createMcpServer(deps, callerOf(authInfo)), {
    legacy: 'reject',
    onerror: (err) => deps.logger.debug({ err: { name: err.name, message: err.message } }, 'mcp refused'),
  });

  // MCP tools run and follow queries; none changes access (api/middleware/access-settled.ts).
  app.all('/mcp', queryOnly(), async (c) => {
    // MCP transports 2025-11-25 §Security Warning (and 2026-07-28 likewise): servers MUST validate
    // Origin against DNS rebinding; an invalid Origin gets 403. Server-side clients send none;
    // browsers on our own origin may.
    const origin = c.req.header('origin');
    if (origin !== undefined && origin !== allowedOrigin)
      return rpcError(c, 403, -32000, 'Origin not allowed');
    const caller = await authenticateMcpRequest(deps, c.req.raw);
    if ('challenge' in caller) {
      c.header('www-authenticate', caller.challenge);
      return c.json(caller.body, caller.status);
    }
    c.set('principal', caller.principal);
    // Neither revision is served with sessions here: 2025-11-25 has no standalone SSE stream or
    // session to end on a stateless server, and 2026-07-28 removed both (transports §GET).
    if (c.req.method !== 'POST') {
      c.header('allow', 'POST');
      return rpcError(c, 405, -32000, 'Method not allowed');
    }
    const authInfo: AuthInfo = {
      // The SDK needs no token: the caller below is what the tools act as. Never echo a secret.
      token: '',
      clientId: caller.client.id,
      scopes: caller.scopes,
      extra: { caller },
    };
    // A body that is not JSON goes to the SDK unread, which answers 415 as the transport says.
    if (!isJsonContentType(c.req.header('content-type') ?? null))
      return modern.fetch(c.req.raw, { authInfo });
    const body = await readBody(c.req.raw, API_BODY_BYTES);
    if (body === 'too_large')
      return rpcError(c, 413, -32600, `the request body exceeds ${API_BODY_BYTES} bytes`, {
        connection: 'close',
      });
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(body);
    } catch {
      return rpcError(c, 400, -32700, 'Parse error: the request body is not JSON');
    }
    // The hot request, a 2025-11-25 tools/call, is answered here (api/mcp/tool-call.ts).
    const call = plainToolCall(c.req.raw, parsedBody);
    if (call) return answerToolCall(deps, caller, call);
    // The body is read once, here, under the limit; the SDK classifies and serves the parsed value
    // instead of reading (and re-streaming) the request again.
    if (await isLegacyRequest(c.req.raw, parsedBody))
      return serveLegacy(deps, c.req.raw, parsedBody, authInfo);
    return modern.fetch(c.req.raw, { authInfo, parsedBody });
  });
  return app;
}

/** The caller authenticated above, which every request's authInfo carries (never absent here). */
function callerOf(authInfo: AuthInfo | undefined): OAuthCaller {
  const caller = (authInfo?.extra as { caller?: OAuthCaller } | undefined)?.caller;
  if (!caller) throw new Error('mcp: a request reached the server without its authenticated caller');
  return caller;
}

/**
 * A 2025-11-25 request, served statelessly (transports 2025-11-25 §Session Management: a server
 * MAY go without sessions). Not the SDK's own stateless fallback: that one answers over an event
 * stream and pipes it through a second stream to see it end; every answer here is one JSON-RPC
 * message, which the transport's JSON-response mode returns as a plain body (§Sending Messages
 * to the Server: either is allowed).
 */
async function serveLegacy(
  deps: Deps,
  req: Request,
  parsedBody: unknown,
  authInfo: AuthInfo,
): Promise<Response> {
  const server = createMcpServer(deps, callerOf(authInfo));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  // Not closed afterwards: in JSON-response mode the answer is complete when handleRequest
  // returns and nothing of the pair outlives the request, while close() builds an Error (with
  // its stack) to settle pending requests there are none of — ~0.05 ms a call (profiled).
  return transport.handleRequest(req, { authInfo, parsedBody });
}

function rpcError(
  c: Context<AppEnv>,
  status: 400 | 403 | 405 | 413,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return c.json({ jsonrpc: '2.0', error: { code, message }, id: null }, status, headers);
}

/** The body as text, or 'too_large' once it passes `max` bytes (declared or counted as it streams). */
async function readBody(req: Request, max: number): Promise<string | 'too_large'> {
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    if (Number(declared) > max) return 'too_large';
    // Node's HTTP parser delivers exactly Content-Length bytes, so the check above bounds the
    // body; text() then lets @hono/node-server read it straight off the socket, without building
    // a web stream over it.
    return req.text();
  }
  // Chunked: counted as it arrives, and cut off at the limit.
  if (!req.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) return 'too_large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
