// An organization's admins keep a connected AI client to some databases, or disable it
// for everyone, whoever connected it; each change is an audited event.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect, mcpStatusOf } from '../oauth/flow.ts';
import { callTool, createTable, mcpClient, registerDatabase } from './target.ts';

let svc: TestService;
let mcp: Client;
let token: string;
let clientId: string;
const TABLE = `ctl_${Date.now()}`;
const dbs: Record<string, { id: string }> = {};

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 3);
  dbs.sales = await registerDatabase(svc, { name: 'sales' });
  dbs.hr = await registerDatabase(svc, { name: 'hr' });
  const connected = await connect(svc, svc.admin);
  token = connected.tokens.access_token;
  clientId = connected.client.client_id;
  mcp = await mcpClient(svc, token);
});
afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
});

const limit = (body: unknown) =>
  svc.fetch(`/api/v1/ai-clients/${encodeURIComponent(clientId)}`, {
    method: 'PUT',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('per-client limits', () => {
  it('lists the connected client for the organization', async () => {
    const res = await svc.fetch('/api/v1/ai-clients', { headers: { 'x-api-key': svc.apiKey } });
    const { data } = (await res.json()) as {
      data: Array<{ client_id: string; people: number; disabled: boolean }>;
    };
    expect(data).toEqual([expect.objectContaining({ client_id: clientId, people: 1, disabled: false })]);
  });

  it('kept to one database: the other is neither listed nor queryable nor readable', async () => {
    expect((await limit({ disabled: false, database_ids: [dbs.sales!.id] })).status).toBe(200);
    const listed = await callTool(mcp, 'list_databases', {});
    expect((listed.data!.databases as Array<{ name: string }>).map((d) => d.name)).toEqual(['sales']);
    const refused = await callTool(mcp, 'run_query', {
      database_id: dbs.hr!.id,
      sql: `select count(*) from ${TABLE}`,
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('keeps the AI client');
    expect((await callTool(mcp, 'get_database_schema', { database_id: dbs.hr!.id })).isError).toBe(true);
    const allowed = await callTool(mcp, 'run_query', {
      database_id: dbs.sales!.id,
      sql: `select count(*)::int as n from ${TABLE}`,
    });
    expect(allowed.data).toMatchObject({ status: 'executed', rows: [[3]] });
  });

  it('disabled: every request is refused with a reason; enabled again, it works', async () => {
    expect((await limit({ disabled: true, database_ids: null })).status).toBe(200);
    const res = await mcpStatusOf(svc, token);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error_description: string }).error_description).toContain('disabled');
    expect((await limit({ disabled: false, database_ids: null })).status).toBe(200);
    expect((await mcpStatusOf(svc, token)).status).toBe(200);
  });

  it('every change is an audited event; bad input names the field and changes nothing', async () => {
    const events = await svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where event = 'ai_client.limited' and subject->>'client_id' = ${clientId}`;
    expect(events[0]!.n).toBe(3);
    const bad = await limit({ disabled: false, database_ids: ['db_nope'] });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
      'database_ids.0',
    );
    const [row] = await svc.deps.sql<{ database_ids: string[] | null }[]>`
      select database_ids from ai_client_controls where client_id = ${clientId}`;
    expect(row!.database_ids).toBeNull();
  });
});

describe('query_history of a client kept away from a database', () => {
  it('shows nothing another client ran on a database this client may not use', async () => {
    expect((await limit({ disabled: false, database_ids: null })).status).toBe(200);
    // Another client of the same person, free to use both databases.
    const other = await connect(svc, svc.admin);
    const otherMcp = await mcpClient(svc, other.tokens.access_token);
    try {
      const marker = `history_marker_${Date.now()}`;
      const ran = await callTool(otherMcp, 'run_query', {
        database_id: dbs.hr!.id,
        sql: `select count(*)::int as ${marker} from ${TABLE}`,
      });
      expect(ran.data).toMatchObject({ status: 'executed' });
      const onSales = await callTool(otherMcp, 'run_query', {
        database_id: dbs.sales!.id,
        sql: `select 1 as sales_${marker}`,
      });
      expect(onSales.data).toMatchObject({ status: 'executed' });

      // Unlimited, this client sees what the other ran on both databases.
      const before = await callTool(mcp, 'query_history', { limit: 100 });
      expect(before.text).toContain(`as ${marker}`);

      expect((await limit({ disabled: false, database_ids: [dbs.sales!.id] })).status).toBe(200);
      const after = await callTool(mcp, 'query_history', { limit: 100 });
      const entries = after.data!.entries as Array<{ database_id: string | null; statement?: string }>;
      expect(after.text).not.toContain(`as ${marker}`);
      expect(entries.some((e) => e.database_id === dbs.hr!.id)).toBe(false);
      expect(entries.some((e) => e.statement === `select 1 as sales_${marker}`)).toBe(true);
    } finally {
      await otherMcp.close();
      await limit({ disabled: false, database_ids: null });
    }
  });
});
