// A 2025-11-25 tools/call answered without the SDK's transport and per-request server.
// It is the hot request of every MCP client: the SDK's route for it — a Server and a transport
// made per request, the message checked against its zod schemas five times over, a promise
// mapping from request id to response — cost about a quarter of the server's CPU per call in the
// 8-client profile. The answer is the same one: the same callTool (api/mcp/server.ts), the same
// JSON-RPC response in the transport's JSON-response mode (transports 2025-11-25 §Sending
// Messages to the Server). Anything that is not plainly such a call goes to the SDK as before.
import { type CallToolResult, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { Deps } from '../../core/deps.ts';
import { mcpToolCalls } from '../../core/metrics.ts';
import type { OAuthCaller } from '../../identity/oauth-access.ts';
import { toolContext } from './context.ts';
import { callTool, structuredText, toolNamed } from './server.ts';

/** A tools/call request of the 2025-11-25 revision, known tool, well-formed. */
export interface PlainToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The call in `body`, when the request is one the SDK would classify as a 2025-11-25 request and
 * serve with nothing but the tools/call handler; otherwise null, and the SDK serves it (and says
 * what is wrong with it, if anything is).
 */
export function plainToolCall(req: Request, body: unknown): PlainToolCall | null {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  // The SDK's JSON-RPC request schema is strict: any other top-level key is not a request.
  if (!onlyKeys(body, MESSAGE_KEYS)) return null;
  const { id, params } = body;
  // JSON-RPC 2.0 §4: a request's id is a string or a number (the SDK takes integers only).
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  // name, arguments and a progress token only: task, requestState, envelope keys and whatever
  // else a later revision adds are the SDK's to check and refuse.
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return null;
  if (typeof params.name !== 'string' || !toolNamed(params.name)) return null;
  if (params.arguments !== undefined && !isObject(params.arguments)) return null;
  if (params._meta !== undefined && !plainMeta(params._meta)) return null;
  // The transport's own checks, which answer 406 and 400: left to it.
  const accept = req.headers.get('accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  const version = req.headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  return { id: id as string | number, name: params.name, args: params.arguments ?? {} };
}

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
  return answerBody(result, call.id, headers);
}

/**
 * The JSON-RPC response, with the key order of the SDK's own answer so the two are the same
 * bytes. A result whose text is its structuredContent as JSON (api/mcp/server.ts callTool) is
 * written from that text: the rows are encoded once, not again for structuredContent.
 */
export function answerBody(
  result: CallToolResult,
  id: string | number,
  headers: Record<string, string> = {},
): Response {
  const text = structuredText(result);
  if (text === null) return answerJson({ result, jsonrpc: '2.0', id }, headers);
  return new Response(
    `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`,
    { headers: { 'content-type': 'application/json', ...headers } },
  );
}

/** Headers as a plain object: @hono/node-server writes those without building a Headers. */
function answerJson(message: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(message), {
    headers: { 'content-type': 'application/json', ...headers },
  });
}
