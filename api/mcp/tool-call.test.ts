// Which requests api/mcp/tool-call.ts answers itself: plainly a 2025-11-25 tools/call of a known
// tool, with the headers the SDK transport would accept. Everything else is the SDK's.
import { describe, expect, it } from 'vitest';
import { structuredResult } from './server.ts';
import { answerBody, plainToolCall } from './tool-call.ts';

const HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const req = (headers: Record<string, string> = HEADERS) =>
  new Request('http://localhost/mcp', { method: 'POST', headers });
const call = (params: Record<string, unknown>, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params,
});

describe('plainToolCall', () => {
  it('takes a tools/call of a known tool, with or without arguments and a progress token', () => {
    expect(plainToolCall(req(), call({ name: 'run_query', arguments: { sql: 'select 1' } }))).toEqual({
      id: 1,
      name: 'run_query',
      args: { sql: 'select 1' },
    });
    expect(plainToolCall(req(), call({ name: 'list_databases' }, 'a'))).toEqual({
      id: 'a',
      name: 'list_databases',
      args: {},
    });
    expect(
      plainToolCall(
        req({ accept: HEADERS.accept }),
        call({ name: 'list_databases', _meta: { progressToken: 3 } }),
      ),
    ).not.toBeNull();
  });

  it('leaves everything else to the SDK', () => {
    const known = { name: 'list_databases', arguments: {} };
    const cases: Array<[string, unknown, Request?]> = [
      ['another method', { ...call(known), method: 'tools/list' }],
      ['not JSON-RPC 2.0', { ...call(known), jsonrpc: '1.0' }],
      ['a batch', [call(known)]],
      ['a notification (no id)', { jsonrpc: '2.0', method: 'tools/call', params: known }],
      ['a null id', call(known, null)],
      ['a fractional id', call(known, 1.5)],
      ['an unknown tool (audited, then a protocol error)', call({ name: 'drop_everything' })],
      ['arguments that are not an object', call({ name: 'list_databases', arguments: [1] })],
      ['no params', { jsonrpc: '2.0', id: 1, method: 'tools/call' }],
      [
        'a 2026-07-28 envelope',
        call({ ...known, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
      ],
      ['a key JSON-RPC requests do not have', { ...call(known), foo: 1 }],
      ['a stray result', { ...call(known), result: {} }],
      ['null arguments', call({ name: 'list_databases', arguments: null })],
      ['a fractional progress token', call({ ...known, _meta: { progressToken: 1.5 } })],
      ['an object progress token', call({ ...known, _meta: { progressToken: {} } })],
      ['another _meta key', call({ ...known, _meta: { 'io.modelcontextprotocol/related-task': 'x' } })],
      ['a task', call({ ...known, task: 'x' })],
      ['a request state', call({ ...known, requestState: 5 })],
      ['a client that cannot take an event stream', call(known), req({ accept: 'application/json' })],
      [
        'a protocol version the transport does not serve',
        call(known),
        req({ ...HEADERS, 'mcp-protocol-version': '2026-07-28' }),
      ],
    ];
    for (const [why, body, request] of cases) expect(plainToolCall(request ?? req(), body), why).toBeNull();
  });
});

describe('answerBody', () => {
  const general = async (result: unknown, id: string | number) =>
    Response.json({ result, jsonrpc: '2.0', id }).text();

  it('writes a structured result from its text: the same bytes as encoding the whole answer', async () => {
    const rows = {
      status: 'executed',
      rows: [['"quoted" \\ back', 'é\u2028\u2029', null, 1.5]],
      num_rows: 1,
    };
    for (const id of [7, 'a"b']) {
      const res = answerBody(structuredResult(rows), id);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.text()).toBe(await general(structuredResult(rows), id));
    }
  });

  it('encodes any other result whole: an error, or one built elsewhere whose text may differ', async () => {
    const error = { content: [{ type: 'text' as const, text: 'refused' }], isError: true };
    expect(await answerBody(error, 1).text()).toBe(await general(error, 1));
    const other = { content: [{ type: 'text' as const, text: 'not the JSON' }], structuredContent: { a: 1 } };
    expect(JSON.parse(await answerBody(other, 1).text()).result).toEqual(other);
  });
});
