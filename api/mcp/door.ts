// POST /mcp's hot request answered in front of the router. A plain tools/call of either revision
// (api/mcp/tool-call.ts) is what an MCP client sends over and over once connected; through the
// router it also paid for the app's middleware chain — a promise per layer, a dozen headers set
// one by one on a Headers object and read back out of it — which costs about a tenth of the
// server's CPU per call (paired rounds with and without the door). Here the call is checked and
// answered with the very functions the /mcp route uses (authenticateMcp, plainToolCall,
// answerToolCall), with the route's log line and metric (noteRequest) and the router's response
// headers (SAFETY_HEADERS), as one plain object.
//
// The door only takes a request the route would take the same way: no Origin to check, a JSON
// body of declared length under the limit, a bearer token, tracing off (spans are the router's).
// Anything else goes on to the app: untouched while its body is unread (its token refused, the
// store failing), as a copy with the same bytes after (it was not such a call after all), and the
// route answers it with the door's token check (api/mcp/auth.ts handOnCheck) — refusals,
// challenges and errors stay the route's own.
import { isJsonContentType } from '@modelcontextprotocol/server';
import type { Deps } from '../../core/deps.ts';
import { tracingActive } from '../../core/tracing.ts';
import { API_BODY_BYTES } from '../middleware/body-limit.ts';
import { noteRequest, requestIdOf } from '../middleware/request-log.ts';
import { SAFETY_HEADERS } from '../middleware/secure-headers.ts';
import { authenticateMcp, handOnCheck } from './auth.ts';
import { answerToolCall, plainToolCall } from './tool-call.ts';

/** What a server hands each request to: the app's fetch, with the adapter's bindings. */
export type Fetch = (req: Request, env?: unknown) => Response | Promise<Response>;

/** `next`, with plain MCP tool calls answered before they reach it. */
export function mcpDoor(deps: Deps, next: Fetch): Fetch {
  return (req, env) => (takes(req) ? answer(deps, req, env, next) : next(req, env));
}

function takes(req: Request): boolean {
  if (req.method !== 'POST' || !isMcpUrl(req.url) || tracingActive()) return false;
  const h = req.headers;
  const length = h.get('content-length');
  return (
    h.get('origin') === null &&
    length !== null &&
    Number(length) <= API_BODY_BYTES &&
    h.get('authorization') !== null &&
    isJsonContentType(h.get('content-type'))
  );
}

/** The path exactly `/mcp`, no query: what the route matches, without parsing the URL. */
function isMcpUrl(url: string): boolean {
  const path = url.indexOf('/', url.indexOf('//') + 2);
  return path !== -1 && url.length - path === 4 && url.endsWith('/mcp');
}

const decoder = new TextDecoder();

async function answer(deps: Deps, req: Request, env: unknown, next: Fetch): Promise<Response> {
  const started = performance.now();
  // The token first, as the route checks it before it reads a body: a refused or anonymous
  // request costs no buffering here. Whatever goes on to the router carries this check, which
  // the route answers with (a challenge, or the store's failure mapped by app.onError in
  // api/app.ts) instead of making it again.
  const check = authenticateMcp(deps, req.headers.get('authorization') ?? undefined);
  let caller: Awaited<typeof check>;
  try {
    caller = await check;
  } catch {
    return next(handOnCheck(req, check), env);
  }
  if ('challenge' in caller) return next(handOnCheck(req, check), env);
  const requestId = requestIdOf(req.headers.get('x-request-id'));
  const headers = { ...SAFETY_HEADERS, 'x-request-id': requestId };
  const principal = caller.principal;
  const done = (res: Response) => {
    noteRequest(deps.logger, {
      requestId,
      method: 'POST',
      route: '/mcp',
      status: res.status,
      started,
      principal,
    });
    return res;
  };
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = new Uint8Array(await req.arrayBuffer());
  } catch {
    // The client went away mid-body (Node's parser delivers exactly Content-Length bytes or fails).
    return done(new Response(null, { status: 400, headers }));
  }
  const onward = () =>
    next(
      handOnCheck(new Request(req.url, { method: req.method, headers: req.headers, body: bytes }), check),
      env,
    );
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(bytes));
  } catch {
    return onward();
  }
  const call = plainToolCall(req, body);
  if (!call) return onward();
  return done(await answerToolCall(deps, caller, call, headers, 'door'));
}
