// The MCP door (api/mcp/door.ts): plain tools/calls answered in front of the router, with the
// router's headers, log line and audit entry; everything else handed to the router unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { authenticateMcpRequest } from '../../api/mcp/auth.ts';
import { mcpDoor } from '../../api/mcp/door.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';
import { createTable, registerDatabase } from './target.ts';

let svc: TestService;
let token: string;
let dbId: string;
const TABLE = `mcp_door_${Date.now()}`;

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 3);
  dbId = (await registerDatabase(svc, { name: 'door' })).id;
  token = (await connect(svc, svc.admin)).tokens.access_token;
});
afterAll(async () => svc?.stop());

const call = (id: number | string, sql = `select id, name from ${TABLE} order by id`) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'run_query', arguments: { database_id: dbId, sql } },
  });

function headersFor(extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  };
}

/** The door in front of a router that only records what reached it. */
function doorWithRecorder() {
  const reached: Request[] = [];
  const door = mcpDoor(svc.deps, (req) => {
    reached.push(req);
    return new Response('router', { status: 299 });
  });
  const send = (
    body: string,
    headers: Record<string, string> = headersFor(),
    path = '/mcp',
    length: string | null = String(Buffer.byteLength(body)),
  ) =>
    door(
      new Request(`${svc.url}${path}`, {
        method: 'POST',
        headers: { ...(length === null ? {} : { 'content-length': length }), ...headers },
        body,
      }),
    );
  return { reached, send, door };
}

/** Plain tool calls answered so far, by the door and by the route, as /metrics counts them. */
async function answeredBy(): Promise<{ door: number; direct: number }> {
  const text = await (await svc.fetch('/metrics')).text();
  const count = (route: string) =>
    Number(
      new RegExp(`^countersign_mcp_tool_calls_total\\{route="${route}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  return { door: count('door'), direct: count('direct') };
}

/** Headers that differ between any two answers (time, ids, framing). */
const VOLATILE = new Set(['date', 'x-request-id', 'content-length', 'connection', 'keep-alive']);
const stable = (res: Response) =>
  Object.fromEntries([...res.headers].filter(([name]) => !VOLATILE.has(name)).sort());

describe('the door answers plain tool calls', () => {
  it('itself: the router never sees the call, the rows come back, the caller is audited', async () => {
    const { reached, send } = doorWithRecorder();
    const res = await send(call(7));
    expect(reached).toHaveLength(0);
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7 });
    expect(answer.result.structuredContent.rows).toEqual([
      [1, 'name 1'],
      [2, 'name 2'],
      [3, 'name 3'],
    ]);
    const [entry] = await svc.deps.sql<{ origin: string; outcome: string; statement: string }[]>`
      select origin, outcome, statement from audit_log
      where statement like ${`%from ${TABLE} order by id`} order by seq desc limit 1`;
    expect(entry).toMatchObject({ origin: 'ai', outcome: 'allowed' });
  });

  it('of the 2026-07-28 revision too, ending its result as that revision does', async () => {
    const { reached, send } = doorWithRecorder();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'm-1',
      method: 'tools/call',
      params: {
        name: 'run_query',
        arguments: { database_id: dbId, sql: `select count(*)::int as n from ${TABLE}` },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    const before = await answeredBy();
    const res = await send(
      body,
      headersFor({
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'run_query',
      }),
    );
    expect(reached).toHaveLength(0);
    expect((await answeredBy()).door).toBe(before.door + 1);
    const answer = await res.json();
    expect(answer).toMatchObject({
      id: 'm-1',
      result: { structuredContent: { rows: [[3]] }, resultType: 'complete' },
    });
    // Without its Mcp-Name header it is not plain: the router (and the SDK behind it) answers.
    await send(body, headersFor({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }));
    expect(reached).toHaveLength(1);
  });

  it("with the router's log line: route, status and principal, under the caller's request id", async () => {
    const { send } = doorWithRecorder();
    const requestId = `door-${Date.now()}`;
    const res = await send(call(8), headersFor({ 'x-request-id': requestId }));
    expect(res.headers.get('x-request-id')).toBe(requestId);
    const line = svc.logs
      .filter((l) => l.includes(requestId))
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'request');
    expect(line).toMatchObject({ msg: 'request', method: 'POST', route: '/mcp', status: 200 });
    expect(line.principal).toMatch(/^usr_/);
    expect(JSON.stringify(line)).not.toContain(token);
  });

  it("over HTTP with the router's headers and body (an Origin sends the same call to the router)", async () => {
    const before = await answeredBy();
    const viaDoor = await svc.fetch('/mcp', { method: 'POST', headers: headersFor(), body: call(9) });
    const viaRouter = await svc.fetch('/mcp', {
      method: 'POST',
      headers: headersFor({ origin: new URL(svc.url).origin }),
      body: call(9),
    });
    expect(viaDoor.status).toBe(200);
    expect(viaRouter.status).toBe(200);
    expect(await answeredBy()).toEqual({ door: before.door + 1, direct: before.direct + 1 });
    expect(stable(viaDoor)).toEqual(stable(viaRouter));
    expect(viaDoor.headers.get('content-security-policy')).toContain("default-src 'self'");
    const [a, b] = [await viaDoor.json(), await viaRouter.json()];
    expect(a.result.structuredContent.rows).toEqual(b.result.structuredContent.rows);
    expect(Object.keys(a)).toEqual(Object.keys(b));
  });
});

describe('everything else goes to the router', () => {
  it('untouched when the headers already say so: an Origin, no length, a length over the limit, another path or method', async () => {
    const { reached, send, door } = doorWithRecorder();
    const withOrigin = await send(call(1), headersFor({ origin: 'https://elsewhere.example' }));
    expect(withOrigin.status).toBe(299);
    await send(call(1), headersFor(), '/mcp?x=1');
    await send(call(1), headersFor(), '/mcp/');
    await send(call(1), { ...headersFor(), 'content-type': 'text/plain' });
    const { authorization: _, ...anonymous } = headersFor();
    await send(call(1), anonymous);
    // A chunked body (no declared length) is the route's to count; so is a length over 1 MiB.
    await send(call(1), headersFor(), '/mcp', null);
    await send(call(1), headersFor(), '/mcp', String(1024 * 1024 + 1));
    await door(new Request(`${svc.url}/mcp`, { method: 'GET', headers: headersFor() }));
    expect(reached).toHaveLength(8);
    // Nothing was read: the router reads the very request.
    for (const req of reached) expect(req.bodyUsed).toBe(false);
  });

  it('untouched when the token is refused: nothing of the body read or parsed', async () => {
    const { reached, send } = doorWithRecorder();
    const res = await send(call(2), headersFor({ authorization: 'Bearer not-a-token' }));
    expect(res.status).toBe(299);
    expect(reached).toHaveLength(1);
    expect(reached[0]!.bodyUsed).toBe(false);
  });

  it('as a copy with the same bytes once the body was read: a non-call, bad JSON', async () => {
    const { reached, send } = doorWithRecorder();
    const bodies = [
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "run_query",',
    ];
    for (const body of bodies) await send(body);
    expect(reached).toHaveLength(2);
    expect(await Promise.all(reached.map((r) => r.text()))).toEqual(bodies);
    expect(reached[0]!.headers.get('authorization')).toBe(`Bearer ${token}`);
  });

  it("with the door's token check, which the route answers with instead of checking again", async () => {
    // A store and keyring that fail on any use: an answer through them is the door's check.
    const unusable = new Proxy(() => {}, {
      get: () => {
        throw new Error('the token was checked again');
      },
      apply: () => {
        throw new Error('the token was checked again');
      },
    });
    const noStore = { config: svc.deps.config, sql: unusable, keyring: unusable } as never;
    const { reached, send } = doorWithRecorder();
    await send(call(7), headersFor({ authorization: 'Bearer not-a-token' }));
    await send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }));
    expect(reached).toHaveLength(2);
    const [refused, copy] = await Promise.all(reached.map((r) => authenticateMcpRequest(noStore, r)));
    expect(refused).toMatchObject({
      status: 401,
      challenge: expect.stringContaining('error="invalid_token"'),
    });
    expect(copy).toMatchObject({ principal: { email: svc.admin.email } });
    // A request the door did not hand on is checked afresh, here through the unusable store.
    const fresh = new Request(`${svc.url}/mcp`, { method: 'POST', headers: headersFor() });
    await expect(authenticateMcpRequest(noStore, fresh)).rejects.toThrow('the token was checked again');
  });

  it("so refusals over HTTP are the route's own: the bearer challenge, the parse error, the size limit", async () => {
    const refused = await svc.fetch('/mcp', {
      method: 'POST',
      headers: headersFor({ authorization: 'Bearer not-a-token' }),
      body: call(5),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const bad = await svc.fetch('/mcp', { method: 'POST', headers: headersFor(), body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32700);
    const large = await svc.fetch('/mcp', {
      method: 'POST',
      headers: headersFor(),
      body: call(6, `select '${'x'.repeat(1024 * 1024)}'`),
    });
    expect(large.status).toBe(413);
    expect(large.headers.get('connection')).toBe('close');
  });

  it("is reviewed whenever the app's middleware changes: the door skips every layer listed here", () => {
    // Each of these was weighed for the door's calls (api/mcp/door.ts): it logs as requestLog does,
    // sends the headers of safetyHeaders and strictCsp, checks the limit bodyLimits leaves to
    // /mcp, and, like the route, is query-only for the access barrier; the session cookie's name
    // is not read by MCP. A new layer fails this until the door is checked against it.
    const layers = createApp(svc.deps)
      .routes.filter((r) => r.path === '/*' && r.method === 'ALL')
      .map((r) => r.handler.name);
    expect(layers).toEqual([
      'logRequest',
      'secureHeaders',
      'contentSecurityPolicyHeader',
      'sessionCookieOfDeployment',
      'limitBody',
      'settleAccessChanges',
    ]);
  });
});
