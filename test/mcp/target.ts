// A target database for MCP tests: a table in the harness PostgreSQL, registered with the service.
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import type { TestService } from '../helpers/service.ts';

/** Creates `table` with `rows` rows (id, name, email) in the harness database. */
export async function createTable(table: string, rows: number): Promise<void> {
  await withHarnessPostgres(async (sql) => {
    await sql`drop table if exists ${sql(table)}`;
    await sql`create table ${sql(table)} (id int primary key, name text not null, email text not null)`;
    await sql`insert into ${sql(table)} select g, 'name ' || g, 'user' || g || '@example.test' from generate_series(1, ${rows}) g`;
  });
}

export interface DatabaseOptions {
  name?: string;
  ai_enabled?: boolean;
  ai_max_rows?: number;
  restrict_access?: boolean;
  ai_allowed?: boolean;
  reviews_required?: number;
}

/** Registers the harness PostgreSQL as a database; returns its id and credential id. */
export async function registerDatabase(
  svc: TestService,
  o: DatabaseOptions = {},
): Promise<{ id: string; credentialId: string }> {
  const pg = servers().postgres;
  const res = await svc.fetch('/api/v1/desk/databases', {
    method: 'POST',
    headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: o.name ?? 'orders',
      adapter: 'postgres',
      hostname: pg.host,
      port: pg.port,
      database: pg.database,
      ai_enabled: o.ai_enabled ?? true,
      ai_max_rows: o.ai_max_rows ?? 500,
      restrict_access: o.restrict_access ?? false,
      credentials: [
        {
          username: pg.user,
          password: pg.password,
          reviews_required: o.reviews_required ?? 0,
          default_credential: true,
          ai_allowed: o.ai_allowed ?? true,
        },
      ],
    }),
  });
  if (res.status !== 201) throw new Error(`database registration failed: ${res.status} ${await res.text()}`);
  const db = (await res.json()) as { id: string; credentials: Array<{ id: string }> };
  return { id: db.id, credentialId: db.credentials[0]!.id };
}

/** An MCP SDK client connected to /mcp with a bearer token. */
export async function mcpClient(svc: TestService, accessToken: string): Promise<Client> {
  const client = new Client({ name: 'countersign-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
  });
  await client.connect(transport);
  return client;
}

/** The two protocol revisions /mcp serves (api/mcp/index.ts). */
export const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];

/** What the tests ask of an MCP client, whichever SDK and revision it speaks. */
export interface AnyMcpClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<object>;
  close(): Promise<void>;
}

/**
 * A client of one revision, as AI clients ship them: 2025-11-25 is the v1 SDK's client
 * (initialize, then requests); 2026-07-28 is the v2 SDK's client pinned to it (no initialize,
 * `_meta` and the Mcp-Method/Mcp-Name headers on every request). Returns what it negotiated.
 */
export async function mcpClientAt(
  svc: TestService,
  accessToken: string,
  revision: Revision,
): Promise<{ client: AnyMcpClient; protocolVersion: string | undefined; sessionId: string | undefined }> {
  const url = new URL(`${svc.url}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${accessToken}` } };
  if (revision === '2025-11-25') {
    const transport = new StreamableHTTPClientTransport(url, { requestInit });
    const client = new Client({ name: 'countersign-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, protocolVersion: transport.protocolVersion, sessionId: transport.sessionId };
  }
  const transport = new ModernTransport(url, { requestInit });
  const client = new ModernClient(
    { name: 'countersign-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: revision } } },
  );
  await client.connect(transport);
  return { client, protocolVersion: transport.protocolVersion, sessionId: transport.sessionId };
}

/**
 * The end of every client-shape test: with the tokens the shape's OAuth flow issued, a client of
 * each revision lists the tools and runs a query, statelessly (no MCP session on either).
 */
export async function listToolsAndQuery(
  svc: TestService,
  accessToken: string,
  query: { databaseId: string; sql: string; params?: unknown[]; rows: unknown[][] },
): Promise<void> {
  for (const revision of REVISIONS) {
    const { client, protocolVersion, sessionId } = await mcpClientAt(svc, accessToken, revision);
    try {
      expect(protocolVersion, revision).toBe(revision);
      expect(sessionId, revision).toBeUndefined();
      expect(
        (await client.listTools()).tools.map((t) => t.name),
        revision,
      ).toContain('run_query');
      const out = await callTool(client, 'run_query', {
        database_id: query.databaseId,
        sql: query.sql,
        ...(query.params ? { params: query.params } : {}),
      });
      expect(out.data, revision).toMatchObject({ status: 'executed', rows: query.rows });
    } finally {
      await client.close();
    }
  }
}

/** The JSON a tool answered with (its structuredContent), or its error text. */
export async function callTool(client: AnyMcpClient, name: string, args: Record<string, unknown>) {
  // Either SDK's result type; both carry these fields on a tools/call answer.
  const result = (await client.callTool({ name, arguments: args })) as {
    content?: unknown;
    isError?: unknown;
    structuredContent?: unknown;
  };
  const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
  return {
    isError: result.isError === true,
    text,
    data: (result.structuredContent ?? null) as Record<string, unknown> | null,
  };
}
