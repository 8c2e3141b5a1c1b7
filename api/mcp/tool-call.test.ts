// Which requests api/mcp/tool-call.ts answers itself: plainly a tools/call of a known tool, in
// 2025-11-25 or 2026-07-28, with the headers the SDK would accept. Everything else is the SDK's.
import { describe, expect, it } from 'vitest';
import { SERVER_INFO, structuredResult } from './server.ts';
import { answerBody, MODERN_REVISION, plainToolCall } from './tool-call.ts';

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
        'a 2026-07-28 envelope without its headers',
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

describe('plainToolCall on 2026-07-28', () => {
  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
    'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const MODERN_HEADERS = {
    accept: HEADERS.accept,
    'mcp-protocol-version': MODERN_REVISION,
    'mcp-method': 'tools/call',
    'mcp-name': 'run_query',
  };
  const modern = (meta: Record<string, unknown> = ENVELOPE, name = 'run_query') =>
    call({ name, arguments: { sql: 'select 1' }, _meta: meta });

  it('takes a call whose envelope and standard headers are what the SDK accepts', () => {
    expect(plainToolCall(req(MODERN_HEADERS), modern())).toEqual({
      id: 1,
      name: 'run_query',
      args: { sql: 'select 1' },
      modern: true,
    });
    // clientInfo is optional in the envelope; protocolVersion and clientCapabilities are not.
    const { 'io.modelcontextprotocol/clientInfo': _, ...bare } = ENVELOPE;
    expect(plainToolCall(req(MODERN_HEADERS), modern(bare))).toMatchObject({ modern: true });
  });

  it('leaves to the SDK whatever it would refuse, or serve with more than the tools/call handler', () => {
    const { 'mcp-name': _, ...noName } = MODERN_HEADERS;
    const { 'mcp-protocol-version': __, ...noVersion } = MODERN_HEADERS;
    const { 'io.modelcontextprotocol/clientCapabilities': ___, ...noCapabilities } = ENVELOPE;
    const cases: Array<[string, unknown, Record<string, string>]> = [
      ['no Mcp-Name', modern(), noName],
      ['an Mcp-Name that names another tool', modern(), { ...MODERN_HEADERS, 'mcp-name': 'list_databases' }],
      ['Mcp-Name in its Base64 form', modern(), { ...MODERN_HEADERS, 'mcp-name': '=?base64?cnVuX3F1ZXJ5?=' }],
      ["an Mcp-Method that is not the body's", modern(), { ...MODERN_HEADERS, 'mcp-method': 'tools/list' }],
      ['no MCP-Protocol-Version', modern(), noVersion],
      [
        'an MCP-Protocol-Version the body does not name',
        modern(),
        { ...MODERN_HEADERS, 'mcp-protocol-version': '2025-11-25' },
      ],
      [
        'a later revision',
        modern({ ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }),
        { ...MODERN_HEADERS, 'mcp-protocol-version': '2027-01-01' },
      ],
      ['an envelope without capabilities', modern(noCapabilities), MODERN_HEADERS],
      [
        'capabilities that are not an object',
        modern({ ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' }),
        MODERN_HEADERS,
      ],
      [
        'a client identity without a version',
        modern({ ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'c' } }),
        MODERN_HEADERS,
      ],
      ['a log level', modern({ ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'info' }), MODERN_HEADERS],
      ['a progress token', modern({ ...ENVELOPE, progressToken: 1 }), MODERN_HEADERS],
      [
        'an unknown tool',
        modern(ENVELOPE, 'drop_everything'),
        { ...MODERN_HEADERS, 'mcp-name': 'drop_everything' },
      ],
      [
        'a client that cannot take an event stream',
        modern(),
        { ...MODERN_HEADERS, accept: 'application/json' },
      ],
    ];
    for (const [why, body, headers] of cases) expect(plainToolCall(req(headers), body), why).toBeNull();
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

  it('on 2026-07-28, ends every result with its resultType and the server identity, as the SDK does', async () => {
    const identity = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };
    const rows = { status: 'executed', rows: [['a']], num_rows: 1 };
    expect(await answerBody(structuredResult(rows), 3, {}, true).text()).toBe(
      await general({ ...structuredResult(rows), resultType: 'complete', _meta: identity }, 3),
    );
    const error = { content: [{ type: 'text' as const, text: 'refused' }], isError: true };
    expect(await answerBody(error, 4, {}, true).text()).toBe(
      await general({ ...error, resultType: 'complete', _meta: identity }, 4),
    );
    // A _meta of the result's own keeps its place and its keys.
    const own = { _meta: { trace: 't' }, content: [{ type: 'text' as const, text: 'x' }] };
    expect(await answerBody(own, 5, {}, true).text()).toBe(
      await general({ _meta: { trace: 't', ...identity }, content: own.content, resultType: 'complete' }, 5),
    );
  });
});
