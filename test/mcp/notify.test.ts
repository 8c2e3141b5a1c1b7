// A query request an AI client submits is announced to the database's reviewers
// exactly like one submitted through REST — every origin gets the same governance deps.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';
import { type ChatPeer, startChatPeer } from '../peers/chat.ts';
import { callTool, mcpClient } from './target.ts';

let svc: TestService;
let peer: ChatPeer;
let mcp: Client;
let databaseId: string;

beforeAll(async () => {
  peer = await startChatPeer();
  svc = await startTestService({
    env: { CHAT_API_URL: `${new URL(peer.url).origin}/`, CHAT_BOT_TOKEN: peer.token },
  });
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'reviewed-with-channel',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      ai_enabled: true,
      slack_channel: '#db-changes',
      credentials: [
        {
          username: pg.user,
          password: pg.password,
          reviews_required: 1,
          default_credential: true,
          ai_allowed: true,
        },
      ],
    }),
  });
  expect(res.status).toBe(201);
  databaseId = ((await res.json()) as { id: string }).id;
  mcp = await mcpClient(svc, (await connect(svc, svc.admin)).tokens.access_token);
});
afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
  await peer?.close();
});

async function messageFor(requestId: string) {
  for (let i = 0; i < 50; i++) {
    const found = peer.messages.find((m) => m.text.includes(requestId));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

describe('reviewers hear of requests from every origin', () => {
  it('an MCP-submitted request is posted to the database channel, as a REST one is', async () => {
    const viaMcp = await callTool(mcp, 'run_query', { database_id: databaseId, sql: 'select 41 + 1' });
    expect(viaMcp.data).toMatchObject({ status: 'pending_review' });
    const mcpMessage = await messageFor(viaMcp.data!.request_id as string);

    const viaRest = await svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: {
        // The bootstrap key is the super admin's own: it submits as them.
        'x-api-key': svc.apiKey,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ database_id: databaseId, statement: 'select 42' }),
    });
    expect(viaRest.status).toBe(202);
    const restId = ((await viaRest.json()) as { request: { id: string } }).request.id;
    const restMessage = await messageFor(restId);

    expect(restMessage?.channel).toBe('C0000000003');
    expect(mcpMessage?.channel).toBe(restMessage?.channel);
    expect(mcpMessage?.text).toContain('select 41 + 1');
  });
});
