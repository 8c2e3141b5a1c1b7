// A query request is acted on as the CALLER, with the caller's origin. An MCP client
// must not run, read or cancel a request its user made through REST on a database or credential
// the AI may not use, and whatever it does is audited as AI-originated (DESIGN.md pipeline step 2).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../identity/manage.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { addPerson, startTestService, type TestService } from '../helpers/service.ts';
import { callTool, createTable, mcpClient, registerDatabase } from '../mcp/target.ts';
import { connect } from '../oauth/flow.ts';

let svc: TestService;
let mcp: Client;
let memberToken: string;
let memberId: string;
const member = { email: 'ai-origin-member@example.test', password: 'member password 123' };
const reviewer = { email: 'ai-origin-reviewer@example.test', password: 'reviewer password 123' };
let reviewerToken: string;
const TABLE = `ai_origin_${Date.now()}`;

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 12);
  memberId = await addPerson(svc, member);
  const reviewerId = await addPerson(svc, { ...reviewer, role: 'admin' });
  memberToken = (await createPersonalToken(svc.deps.sql, { userId: memberId, name: 't', expiresAt: null }))
    .secret;
  reviewerToken = (
    await createPersonalToken(svc.deps.sql, { userId: reviewerId, name: 't', expiresAt: null })
  ).secret;
  mcp = await mcpClient(svc, (await connect(svc, member)).tokens.access_token);
});
afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
});

const rest = (token: string, path: string, body?: unknown) =>
  svc.fetch(`/api/v1/desk/query-requests${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** The member submits through REST and a reviewer approves: an approved request the AI did not make. */
async function approvedRestRequest(databaseId: string, statement: string): Promise<string> {
  const submitted = await rest(memberToken, '', { database_id: databaseId, statement });
  expect(submitted.status).toBe(202);
  const id = ((await submitted.json()) as { request: { id: string } }).request.id;
  const approved = await rest(reviewerToken, `/${id}/approve`, { comment: 'fine' });
  expect(approved.status).toBe(200);
  return id;
}

async function rowCount(): Promise<number> {
  return withHarnessPostgres(async (sql) => {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(TABLE)}`;
    return r!.n;
  });
}

async function aiAuditOf(requestId: string) {
  return svc.deps.sql<
    { origin: string; ai_client_name: string | null; outcome: string; detail: string | null }[]
  >`
    select origin, ai_client_name, outcome, detail from audit_log
    where request_id = ${requestId} and origin = 'ai' order by occurred_at`;
}

describe('run_query {request_id} applies the AI rules of the caller', () => {
  it('refuses a REST-approved INSERT on a database with ai_enabled=false, audits it as AI, writes nothing', async () => {
    const db = await registerDatabase(svc, {
      name: 'closed',
      ai_enabled: false,
      ai_allowed: false,
      reviews_required: 1,
    });
    const before = await rowCount();
    const id = await approvedRestRequest(db.id, `insert into ${TABLE} values (1000, 'x', 'x@example.test')`);
    const out = await callTool(mcp, 'run_query', { request_id: id });
    expect(out.isError).toBe(true);
    expect(await rowCount()).toBe(before);
    const audit = await aiAuditOf(id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ origin: 'ai', ai_client_name: 'Test AI client', outcome: 'denied' });
    // The request is still approved: the person can still run it through REST.
    const view = await rest(memberToken, `/${id}`);
    expect(((await view.json()) as { status: string }).status).toBe('approved');
    // query_history lists the attempt.
    const history = await callTool(mcp, 'query_history', { limit: 20 });
    const entries = history.data!.entries as Array<{ request_id: string | null; outcome: string }>;
    expect(entries.some((e) => e.request_id === id && e.outcome === 'denied')).toBe(true);
  });

  it('refuses a write on an AI-enabled database through an ai_allowed credential (AI is read-only)', async () => {
    const db = await registerDatabase(svc, { name: 'ai-open', reviews_required: 1 });
    const before = await rowCount();
    const id = await approvedRestRequest(db.id, `insert into ${TABLE} values (1001, 'y', 'y@example.test')`);
    const out = await callTool(mcp, 'run_query', { request_id: id });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('may only read');
    expect(await rowCount()).toBe(before);
  });

  it('caps rows at ai_max_rows when the AI runs a REST request', async () => {
    const db = await registerDatabase(svc, { name: 'ai-capped', reviews_required: 1, ai_max_rows: 3 });
    const id = await approvedRestRequest(db.id, `select id from ${TABLE} order by id`);
    const out = await callTool(mcp, 'run_query', { request_id: id });
    expect(out.data).toMatchObject({ status: 'executed', num_rows: 3, truncated: true });
    expect(await aiAuditOf(id)).toEqual([
      expect.objectContaining({ origin: 'ai', ai_client_name: 'Test AI client', outcome: 'allowed' }),
    ]);
  });

  it('get_query_request and cancel_query do not reach requests on databases the AI may not use', async () => {
    const db = await registerDatabase(svc, { name: 'closed-2', ai_enabled: false, reviews_required: 1 });
    const submitted = await rest(memberToken, '', { database_id: db.id, statement: 'select 1' });
    const id = ((await submitted.json()) as { request: { id: string } }).request.id;
    const got = await callTool(mcp, 'get_query_request', { request_id: id });
    expect(got.isError).toBe(true);
    expect(got.text).toBe('no such query request');
    const canceled = await callTool(mcp, 'cancel_query', { request_id: id });
    expect(canceled.isError).toBe(true);
    const view = await rest(memberToken, `/${id}`);
    expect(((await view.json()) as { status: string }).status).toBe('pending');
  });
});
