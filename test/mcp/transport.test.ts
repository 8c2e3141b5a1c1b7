// /mcp on the wire, both protocol revisions on one endpoint (api/mcp/index.ts): what each revision
// answers, how the two are told apart, and how bad requests are refused, as raw HTTP so nothing
// an SDK does on either side hides it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';
import { createTable, registerDatabase } from './target.ts';

let svc: TestService;
let token: string;
let dbId: string;
const TABLE = `mcp_wire_${Date.now()}`;
const MODERN = '2026-07-28';

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 3);
  dbId = (await registerDatabase(svc, { name: 'wire' })).id;
  token = (await connect(svc, svc.admin)).tokens.access_token;
});
afterAll(async () => svc?.stop());

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return svc.fetch('/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    // A stream goes as it is, chunked (no Content-Length).
    ...(body instanceof ReadableStream
      ? { body, duplex: 'half' }
      : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  } as RequestInit);
}

/** A 2026-07-28 request: the revision and capabilities in `_meta`, the routing headers set. */
function modern(
  method: string,
  params: Record<string, unknown> = {},
  name?: string,
  meta: Record<string, unknown> = {},
): Promise<Response> {
  return post(
    {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          ...meta,
        },
      },
    },
    {
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
  );
}

/** countersign_mcp_tool_calls_total by route, as /metrics shows it. */
async function routes(): Promise<{ direct: number; sdk: number }> {
  const text = await (await svc.fetch('/metrics')).text();
  const count = (route: string) =>
    Number(
      new RegExp(`^countersign_mcp_tool_calls_total\\{route="${route}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  // A plain call is answered by the door in front of the router, or by the route (api/mcp/door.ts).
  return { direct: count('direct') + count('door'), sdk: count('sdk') };
}

/** Timings differ from call to call; nothing else may. */
const withoutTimes = (text: string) => text.replace(/(\\*"duration_ms\\*":)[\d.]+/g, '$10');

describe('2026-07-28: the stateless core', () => {
  it('server/discover names the revision, the server and its tools capability, without a session', async () => {
    const res = await modern('server/discover');
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const { result } = await res.json();
    expect(result.supportedVersions).toContain(MODERN);
    expect(result.capabilities.tools).toBeDefined();
    expect(result.serverInfo ?? result._meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({
      name: 'countersign',
    });
  });

  it('tools/list carries its cache hint (utilities/caching): five minutes, for this caller only', async () => {
    const res = await modern('tools/list');
    const { result } = await res.json();
    expect(result).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
    expect(result.tools).toHaveLength(9);
  });

  it('tools/call runs the governed query, named in Mcp-Name', async () => {
    const res = await modern(
      'tools/call',
      { name: 'run_query', arguments: { database_id: dbId, sql: `select count(*)::int as n from ${TABLE}` } },
      'run_query',
    );
    expect(res.status).toBe(200);
    const { result } = await res.json();
    expect(result.structuredContent).toMatchObject({ status: 'executed', rows: [[3]] });
  });

  it('a plain call is answered without the SDK, to the byte what the SDK answers (api/mcp/tool-call.ts)', async () => {
    const params = {
      name: 'run_query',
      arguments: { database_id: dbId, sql: `select count(*)::int as n from ${TABLE}` },
    };
    const identity = { 'io.modelcontextprotocol/clientInfo': { name: 'wire', version: '1.0.0' } };
    const before = await routes();
    const direct = await modern('tools/call', params, 'run_query', identity);
    // A log level in the envelope is the SDK's to honour: the same call, served by it.
    const viaSdk = await modern('tools/call', params, 'run_query', {
      ...identity,
      'io.modelcontextprotocol/logLevel': 'info',
    });
    expect(await routes()).toEqual({ direct: before.direct + 1, sdk: before.sdk + 1 });
    expect([direct.status, viaSdk.status]).toEqual([200, 200]);
    expect(direct.headers.get('content-type')).toBe(viaSdk.headers.get('content-type'));
    const [a, b] = [await direct.text(), await viaSdk.text()];
    expect(withoutTimes(a)).toBe(withoutTimes(b));
    expect(JSON.parse(a).result).toMatchObject({
      structuredContent: { status: 'executed', rows: [[3]] },
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'countersign' } },
    });

    // A refusal is a result with isError on both roads too.
    const bad = { name: 'run_query', arguments: { database_id: 42 } };
    const refusedDirect = await modern('tools/call', bad, 'run_query');
    const refusedSdk = await modern('tools/call', bad, 'run_query', {
      'io.modelcontextprotocol/logLevel': 'info',
    });
    expect(await refusedDirect.text()).toBe(await refusedSdk.text());
    expect(await routes()).toEqual({ direct: before.direct + 2, sdk: before.sdk + 2 });
  });

  it('an unknown tool is a protocol error (-32602), on this revision as on 2025-11-25', async () => {
    const res = await modern('tools/call', { name: 'test_simple_text', arguments: {} }, 'test_simple_text');
    expect(await res.json()).toMatchObject({
      error: { code: -32602, message: expect.stringMatching(/Unknown tool: test_simple_text/) },
    });
    const legacy = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'drop_everything', arguments: {} } },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(await legacy.json()).toMatchObject({
      id: 4,
      error: { code: -32602, message: expect.stringMatching(/Unknown tool: drop_everything/) },
    });
    // Every call leaves an audit entry, a refused one too: a client probing for tools is seen.
    const audited = await svc.deps.sql<{ outcome: string; origin: string; detail: string }[]>`
      select outcome, origin, detail from audit_log
      where event = 'mcp.tool' and subject->>'tool' in ('test_simple_text', 'drop_everything')
      order by seq`;
    expect(audited).toEqual([
      { outcome: 'denied', origin: 'ai', detail: 'unknown tool test_simple_text' },
      { outcome: 'denied', origin: 'ai', detail: 'unknown tool drop_everything' },
    ]);
  });

  it('refuses a request whose Mcp-Method header disagrees with its body, before any tool runs', async () => {
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
    );
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(body.error.message).toMatch(/mcp-method/i);
  });

  it('initialize is not a method of this revision', async () => {
    const res = await modern('initialize');
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe(-32601);
  });
});

describe('2025-11-25: initialize, then requests, no session', () => {
  it('initialize answers with 2025-11-25 and no Mcp-Session-Id; a later call needs none', async () => {
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    // One JSON body, not an event stream: every answer here is a single message.
    expect(init.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await init.json()).result.protocolVersion).toBe('2025-11-25');

    const list = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    const { result } = await list.json();
    expect(result.tools).toHaveLength(9);
    // Cache hints are of the new revision only.
    expect(result.ttlMs).toBeUndefined();
  });
});

describe('2025-11-25 tools/call, answered without the SDK transport (api/mcp/tool-call.ts)', () => {
  const call = (id: unknown, name: string, args?: unknown, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, ...(args === undefined ? {} : { arguments: args }), ...extra },
  });
  const v1 = { 'mcp-protocol-version': '2025-11-25' };

  /**
   * The same message both ways: alone it is answered directly; as a one-message batch the SDK
   * serves it (and answers it alone). The two answers must be the same bytes but for timings.
   */
  async function bothWays(message: Record<string, unknown>) {
    const before = await routes();
    const direct = await post(message, v1);
    const viaSdk = await post([message], v1);
    expect(await routes()).toEqual({ direct: before.direct + 1, sdk: before.sdk + 1 });
    expect([direct.status, viaSdk.status]).toEqual([200, 200]);
    expect(direct.headers.get('content-type')).toBe(viaSdk.headers.get('content-type'));
    const [a, b] = [await direct.text(), await viaSdk.text()];
    expect(withoutTimes(a)).toBe(withoutTimes(b));
    return JSON.parse(a);
  }

  it('answers what the SDK answers, to the byte: a result, a refusal as isError, a query', async () => {
    const listed = await bothWays(call(7, 'list_databases', {}));
    expect(listed.id).toBe(7);
    expect(listed.result.structuredContent.databases.map((d: { id: string }) => d.id)).toContain(dbId);

    const refused = await bothWays(call('r-1', 'run_query', { database_id: 42 }));
    expect(refused.result.isError).toBe(true);

    const ran = await bothWays(
      call(
        8,
        'run_query',
        { database_id: dbId, sql: `select count(*)::int as n from ${TABLE}` },
        {
          _meta: { progressToken: 'p' },
        },
      ),
    );
    expect(ran.result.structuredContent).toMatchObject({ status: 'executed', rows: [[3]] });
  });

  it('leaves to the SDK what is not plainly such a call, which answers as before', async () => {
    const before = await routes();
    // An unknown tool: the protocol error, after its audit entry.
    const unknown = await (await post(call(1, 'no_such_tool', {}), v1)).json();
    expect(unknown.error.code).toBe(-32602);
    // Arguments that are not an object, or null; a malformed task: the SDK refuses the params.
    for (const [id, message] of [
      [2, call(2, 'list_databases', [1])],
      [3, call(3, 'list_databases', null)],
      [4, call(4, 'list_databases', {}, { task: 'x' })],
    ] as const) {
      const answer = await (await post(message, v1)).json();
      expect(answer).toMatchObject({ id, error: { code: -32602 } });
    }
    // An id JSON-RPC does not allow, or a key a request does not have: not a request at all.
    expect((await post(call(null, 'list_databases', {}), v1)).status).toBe(400);
    expect((await post({ ...call(5, 'list_databases', {}), foo: 1 }, v1)).status).toBe(400);
    // A version the transport does not serve: 400 from it.
    expect((await post(call(6, 'list_databases', {}), { 'mcp-protocol-version': '1999-01-01' })).status).toBe(
      400,
    );
    // A client that cannot take an event stream: 406 from the transport.
    expect((await post(call(7, 'list_databases', {}), { ...v1, accept: 'application/json' })).status).toBe(
      406,
    );
    // None of them ran a tool, either way.
    expect(await routes()).toEqual(before);
  });
});

describe('bad requests get a clear refusal', () => {
  it('a body that is not JSON: 400 parse error', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: -32700, message: expect.stringMatching(/not JSON/) },
    });
  });

  it('a body over 1 MiB: 413, without reading on', async () => {
    const res = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { pad: 'x'.repeat(1024 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      error: { message: expect.stringMatching(/exceeds 1048576 bytes/) },
    });
  });

  it('a chunked body (no Content-Length) is counted as it arrives: 413 past 1 MiB', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // 2 MiB in all.
        if (sent++ < 32) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await post(body);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      error: { message: expect.stringMatching(/exceeds 1048576 bytes/) },
    });
  });

  it('a chunked body under the limit is served', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    const res = await post(body, { 'mcp-protocol-version': '2025-11-25' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: 3, result: {} });
  });

  it('a body that is not declared JSON: 415 from the transport', async () => {
    const res = await post('{}', { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('GET (a session stream): 405 with Allow: POST', async () => {
    const res = await svc.fetch('/mcp', {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('an Origin other than our own: 403 before authentication', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { origin: 'http://evil.example.com' },
    );
    expect(res.status).toBe(403);
  });
});
