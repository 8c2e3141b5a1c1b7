// A tools/call answered without the SDK's transport and per-request server, in either protocol
// revision. It is the hot request of every MCP client: the SDK's route for it — a Server and a
// transport made per request, the message checked against its zod schemas five times over, a
// promise mapping from request id to response — cost about a quarter of the server's CPU per call
// in the 8-client profile. The answer is the same one: the same callTool (api/mcp/server.ts), the
// same JSON-RPC response in the transport's JSON-response mode (transports 2025-11-25 §Sending
// Messages to the Server), and on 2026-07-28 the same `resultType` and server identity the SDK
// stamps on every result. Anything that is not plainly such a call goes to the SDK as before.
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { Deps } from '../../core/deps.ts';
import { mcpToolCalls } from '../../core/metrics.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import { toolContext } from './context.ts';
import { callTool, SERVER_INFO, structuredText, toolNamed } from './server.ts';

/** A tools/call request of a known tool, well-formed. */
export interface PlainToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
  /** Set when the call is of the stateless core (its envelope names 2026-07-28); else 2025-11-25. */
  modern?: true;
}

/**
 * The revision answered here besides 2025-11-25. A later one the SDK learns goes to the SDK,
 * which knows what that revision's answer looks like.
 */
export const MODERN_REVISION = '2026-07-28';

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The call in `body`, when the request is one the SDK would classify and serve with nothing but
 * the tools/call handler, in either revision; otherwise null, and the SDK serves it (and says
 * what is wrong with it, if anything is).
 */
export function plainToolCall(req: Request, body: unknown): PlainToolCall | null {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  // The SDK's JSON-RPC request schema is strict: any other top-level key is not a request.
  if (!onlyKeys(body, MESSAGE_KEYS)) return null;
  const { id, params } = body;
  // JSON-RPC 2.0 §4: a request's id is a string or a number (the SDK takes integers only).
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  // name, arguments and _meta only: task, requestState and whatever else a later revision adds
  // are the SDK's to check and refuse.
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return null;
  if (typeof params.name !== 'string' || !toolNamed(params.name)) return null;
  if (params.arguments !== undefined && !isObject(params.arguments)) return null;
  // The transport's own checks, which answer 406 and 400: left to it.
  const accept = req.headers.get('accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const call = { id: id as string | number, name: params.name, args: params.arguments ?? {} };
  const meta = params._meta;
  if (isObject(meta) && PROTOCOL_VERSION_META_KEY in meta)
    return modernCall(req, body, params.name, meta) ? { ...call, modern: true } : null;
  if (meta !== undefined && !plainMeta(meta)) return null;
  const version = req.headers.get('mcp-protocol-version');
  // The 2025 revisions only: a 2026-07-28 header without its envelope is the SDK's to refuse.
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  return call;
}

/**
 * A 2026-07-28 call the SDK would serve (createMcpHandler's modern leg), checked as it checks:
 * - the envelope names this revision and carries nothing but the client's identity and
 *   capabilities (a log level, trace context or anything later is the SDK's);
 * - transports 2026-07-28 §Standard MCP Request Headers: MCP-Protocol-Version, Mcp-Method and
 *   Mcp-Name are present and mirror the body, exactly (a header the SDK must first unwrap, such as
 *   Mcp-Name's Base64 form, goes to it);
 * - the envelope's own schema, and the body as a whole, by the SDK's classifier, the one the
 *   route would be sent on by. Our Server has no tool declaring parameter headers or scope
 *   challenges, and tools/call requires no client capability: the SDK's remaining rungs pass.
 */
function modernCall(
  req: Request,
  body: Record<string, unknown>,
  name: string,
  meta: Record<string, unknown>,
) {
  if (meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION || !onlyKeys(meta, MODERN_META_KEYS)) return false;
  const h = req.headers;
  const protocolVersionHeader = h.get('mcp-protocol-version');
  const mcpMethodHeader = h.get('mcp-method');
  const mcpNameHeader = h.get('mcp-name');
  if (protocolVersionHeader !== MODERN_REVISION || mcpMethodHeader !== 'tools/call' || mcpNameHeader !== name)
    return false;
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader,
    mcpMethodHeader,
    mcpNameHeader,
    body,
  });
  return route.kind === 'modern' && route.messageKind === 'request';
}

const MODERN_META_KEYS = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
]);

const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta']);

function onlyKeys(x: Record<string, unknown>, allowed: Set<string>): boolean {
  for (const key in x) if (!allowed.has(key)) return false;
  return true;
}

/** `_meta` with at most a progress token (a string or an integer, 2025-11-25 basic/utilities/progress). */
function plainMeta(meta: unknown): boolean {
  if (!isObject(meta) || !onlyKeys(meta, META_KEYS)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || Number.isSafeInteger(token);
}

const META_KEYS = new Set(['progressToken']);

/** Runs the call as the SDK's tools/call handler would, and answers its JSON-RPC response. */
export async function answerToolCall(
  deps: Deps,
  caller: OAuthCaller,
  call: PlainToolCall,
  headers: Record<string, string> = {},
  route: 'direct' | 'door' = 'direct',
): Promise<Response> {
  mcpToolCalls.inc({ route });
  let result: CallToolResult;
  try {
    result = await callTool(toolContext(deps, caller), toolNamed(call.name)!, call.args);
  } catch (err) {
    // callTool turns every tool failure into a result; what is left (the audit append failing)
    // is the server's, answered as JSON-RPC 2.0 §5.1 Internal error without its text.
    deps.logger.error(
      { err: { name: (err as Error).name, message: (err as Error).message }, tool: call.name },
      'mcp tool call failed',
    );
    return answerJson(
      { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'Internal error' } },
      headers,
    );
  }
  return answerBody(result, call.id, headers, call.modern === true);
}

/**
 * The JSON-RPC response, with the key order of the SDK's own answer so the two are the same
 * bytes. A result whose text is its structuredContent as JSON (api/mcp/server.ts callTool) is
 * written from that text: the rows are encoded once, not again for structuredContent. On
 * 2026-07-28 every result ends as the SDK ends it: `resultType` (schema: absent means an older
 * server), then the server's identity under `_meta`.
 */
export function answerBody(
  result: CallToolResult,
  id: string | number,
  headers: Record<string, string> = {},
  modern = false,
): Response {
  const text = structuredText(result);
  if (text === null)
    return answerJson({ result: modern ? stamped(result) : result, jsonrpc: '2.0', id }, headers);
  return new Response(
    `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}${modern ? MODERN_TAIL : ''}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`,
    { headers: { 'content-type': 'application/json', ...headers } },
  );
}

/** What the SDK adds to a 2026-07-28 result that has neither a resultType nor a _meta of its own. */
const MODERN_TAIL = `,"resultType":"complete","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO })}`;

/**
 * The same, for any result, by the SDK's rules: a resultType of its own is kept; a _meta of its
 * own gains the identity unless it names one already or is not an object.
 */
function stamped(result: CallToolResult): Record<string, unknown> {
  const typed: Record<string, unknown> =
    (result as Record<string, unknown>).resultType === undefined
      ? { ...result, resultType: 'complete' }
      : result;
  const meta = typed._meta;
  if (meta === undefined) return { ...typed, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  if (!isObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return typed;
  return { ...typed, _meta: { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO } };
}

/** Headers as a plain object: @hono/node-server writes those without building a Headers. */
function answerJson(message: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(message), {
    headers: { 'content-type': 'application/json', ...headers },
  });
}
