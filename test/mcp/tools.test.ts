import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userCaller } from '../../audit/actors.ts';
import { reviewRequest } from '../../governance/requests.ts';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connect } from '../oauth/flow.ts';
import { callTool, createTable, mcpClient, registerDatabase } from './target.ts';

let svc: TestService;
let mcp: Client;
let orgId: string;
const member = { email: 'member@example.test', password: 'member password 123' };
let memberId: string;
const TABLE = `mcp_tools_${Date.now()}`;
const dbs: Record<string, { id: string; credentialId: string }> = {};
let protectedDb: string;

beforeAll(async () => {
  svc = await startTestService();
  await createTable(TABLE, 20);
  const [admin] = await svc.deps.sql<
    { id: string; org_id: string }[]
  >`select id, org_id from users where lower(email) = ${svc.admin.email}`;
  orgId = admin!.org_id;
  memberId = (
    await createUser(svc.deps.sql, { orgId, email: member.email, role: 'member', password: member.password })
  ).id;
  dbs.open = await registerDatabase(svc, { name: 'open', ai_max_rows: 5 });
  dbs.noAi = await registerDatabase(svc, { name: 'no-ai', ai_enabled: false });
  dbs.noCred = await registerDatabase(svc, { name: 'no-ai-credential', ai_allowed: false });
  dbs.restricted = await registerDatabase(svc, { name: 'restricted', restrict_access: true });
  dbs.reviewed = await registerDatabase(svc, { name: 'reviewed', reviews_required: 1 });
  const { tokens } = await connect(svc, member);
  mcp = await mcpClient(svc, tokens.access_token);
});
afterAll(async () => {
  await mcp?.close();
  await svc?.stop();
});

const q = (database_id: string, sql: string) => callTool(mcp, 'run_query', { database_id, sql });

describe('tools/list (input schemas generated from the validation schemas)', () => {
  it('every property is described, required fields are marked, and limits come from the validation', async () => {
    const { tools } = await mcp.listTools();
    type Schema = { type: string; required?: string[]; properties: Record<string, Record<string, unknown>> };
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema as unknown as Schema]));
    for (const [name, schema] of Object.entries(byName)) {
      expect(schema.type, name).toBe('object');
      for (const [prop, def] of Object.entries(schema.properties ?? {}))
        expect(typeof def.description, `${name}.${prop}`).toBe('string');
    }
    expect(byName.sample_table!.required).toEqual(['database_id', 'table']);
    expect(byName.sample_table!.properties.limit).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
    });
    expect(byName.run_query!.properties.justification).toMatchObject({ type: 'string', maxLength: 2000 });
  });
});

describe('list_databases', () => {
  it('lists only databases the user can access that have ai_enabled', async () => {
    const out = await callTool(mcp, 'list_databases', {});
    const names = (out.data!.databases as Array<{ name: string }>).map((d) => d.name).sort();
    expect(names).toEqual(['no-ai-credential', 'open', 'reviewed']);
  });
});

describe('run_query governance for AI (SPEC.md 1.4, 8)', () => {
  it('caps rows at ai_max_rows', async () => {
    const out = await q(dbs.open!.id, `select id from ${TABLE} order by id`);
    expect(out.data).toMatchObject({ status: 'executed', num_rows: 5, truncated: true });
  });

  it('runs reads in a read-only transaction: a SELECT that writes through a function fails', async () => {
    // A user function that writes: the classifier can only read `select fn()` as a read.
    const fn = `${TABLE}_touch`;
    await withHarnessPostgres((sql) =>
      sql.unsafe(
        `create or replace function ${fn}() returns int language sql as 'update ${TABLE} set name = ''touched'' where id = 1 returning 1'`,
      ),
    );
    const out = await q(dbs.open!.id, `select ${fn}() as n`);
    expect(JSON.stringify(out)).toMatch(/read-only transaction/);
    const [row] = await withHarnessPostgres((sql) => sql.unsafe(`select name from ${TABLE} where id = 1`));
    expect(row!.name).toBe('name 1');
  });

  it('refuses a database without ai_enabled', async () => {
    const out = await q(dbs.noAi!.id, 'select 1');
    expect(out.isError).toBe(true);
    expect(out.text).toContain('AI access is not enabled');
  });

  it('refuses a credential without ai_allowed', async () => {
    const out = await q(dbs.noCred!.id, 'select 1');
    expect(out.isError).toBe(true);
    expect(out.text).toContain('the AI may not run as credential');
  });

  it('a restricted database without a grant does not exist for the user', async () => {
    const out = await q(dbs.restricted!.id, 'select 1');
    expect(out.isError).toBe(true);
    expect(out.text).toBe('no such database');
  });

  it('a granted restricted database works until the grant is removed, then the next query is refused', async () => {
    const grants = `/api/v1/desk/databases/${dbs.restricted!.id}/grants`;
    const headers = { 'x-api-key': svc.apiKey, 'content-type': 'application/json' };
    expect(
      (await svc.fetch(grants, { method: 'POST', headers, body: JSON.stringify({ user_id: memberId }) }))
        .status,
    ).toBe(201);
    expect((await q(dbs.restricted!.id, 'select 1 as one')).data).toMatchObject({
      status: 'executed',
      rows: [[1]],
    });
    expect((await svc.fetch(`${grants}/${memberId}`, { method: 'DELETE', headers })).status).toBe(200);
    const after = await q(dbs.restricted!.id, 'select 1 as one');
    expect(after.isError).toBe(true);
    expect(after.text).toBe('no such database');
  });

  it('refuses a writing statement', async () => {
    const out = await q(dbs.open!.id, `delete from ${TABLE}`);
    expect(out.isError).toBe(true);
    expect(out.text).toContain('may only read');
  });

  it('audits every call as AI-originated, with the client name, denials included', async () => {
    const rows = await svc.deps.sql<{ outcome: string; n: number }[]>`
      select outcome, count(*)::int as n from audit_log
      where actor_user_id = ${memberId} and origin = 'ai' and ai_client_name = 'Test AI client'
      group by outcome order by outcome`;
    const byOutcome = Object.fromEntries(rows.map((r) => [r.outcome, r.n]));
    expect(byOutcome.allowed).toBeGreaterThanOrEqual(2);
    expect(byOutcome.denied).toBeGreaterThanOrEqual(4);
  });
});

describe('one audit entry per tool call (no mutable "piped" flag)', () => {
  const entriesSince = async (seq: bigint) =>
    svc.deps.sql<{ event: string; outcome: string; statement: string; subject: { tool?: string } | null }[]>`
      select event, outcome, statement, subject from audit_log
      where actor_user_id = ${memberId} and seq > ${seq} order by seq`;
  const head = async () =>
    (
      await svc.deps.sql<
        { seq: bigint }[]
      >`select coalesce(max(seq), 0) as seq from audit_log where org_id = ${orgId}`
    )[0]!.seq;

  it('a query the pipeline refuses leaves its query entry and no second tool event', async () => {
    const seq = await head();
    const out = await q(dbs.open!.id, `update ${TABLE} set id = id`);
    expect(out.isError).toBe(true);
    const entries = await entriesSince(seq);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ event: 'query', outcome: 'denied' });
  });

  it('a refusal before the pipeline (a request that is not the caller’s) is audited as a tool event', async () => {
    const seq = await head();
    const out = await callTool(mcp, 'run_query', { request_id: 'qr_00000000000000000000000000' });
    expect(out.isError).toBe(true);
    const entries = await entriesSince(seq);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      event: 'mcp.tool',
      outcome: 'denied',
      subject: { tool: 'run_query' },
    });
  });

  it('a query that runs leaves exactly its query entry', async () => {
    const seq = await head();
    expect((await q(dbs.open!.id, 'select 1 as one')).data).toMatchObject({ status: 'executed' });
    const entries = await entriesSince(seq);
    expect(entries.map((e) => [e.event, e.outcome])).toEqual([['query', 'allowed']]);
  });
});

describe('errors of another person’s request under the reader’s policy', () => {
  it('get_query_request hides a failure that quotes a value the member’s policy hides', async () => {
    const db = await registerDatabase(svc, { name: 'reviewed-protected', reviews_required: 1 });
    // The admin in person (their own token): a key acts for someone only when a super admin marked it.
    const [root] = await svc.deps.sql<
      { id: string }[]
    >`select id from users where email = ${svc.admin.email}`;
    const { secret } = await createPersonalToken(svc.deps.sql, {
      userId: root!.id,
      name: 'admin',
      expiresAt: null,
    });
    const asAdmin = (method: string, path: string, body?: unknown) =>
      svc.fetch(path, {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const policy = await asAdmin('POST', `/api/v1/desk/databases/${db.id}/policies`, {
      name: 'emails hidden from members',
      rules: [
        { table: TABLE, column: 'id', action: 'show' },
        { table: TABLE, column: 'name', action: 'show' },
        { table: TABLE, column: 'email', action: 'hide' },
      ],
      assignments: { roles: ['member'] },
    });
    expect(policy.status, await policy.clone().text()).toBe(201);
    const submitted = await asAdmin('POST', '/api/v1/desk/query-requests', {
      database_id: db.id,
      statement: `select cast(email as int) from ${TABLE} where id = 1`,
    });
    const requestId = ((await submitted.json()) as { request: { id: string } }).request.id;
    await reviewRequest(
      svc.deps,
      userCaller(orgId, { kind: 'user', userId: memberId, role: 'member' }),
      requestId,
      {
        verdict: 'approve',
        body: 'ok',
      },
    );
    const ran = await asAdmin('POST', `/api/v1/desk/query-requests/${requestId}/run`, {});
    expect(ran.status).toBe(422);
    // The admin ran it under no policy: they read the database's own message.
    expect(await ran.text()).toContain('user1@example.test');

    const seen = await callTool(mcp, 'get_query_request', { request_id: requestId });
    expect(seen.data).toMatchObject({ status: 'failed', yours: false });
    expect(String(seen.data!.error)).toMatch(/the error is hidden/);
    expect(seen.text).not.toContain('user1@example.test');
  });
});

describe('review gate', () => {
  it('a query needing review returns pending_review; once approved it runs by id, unchanged', async () => {
    const sql = `select count(*) as n from ${TABLE}`;
    const pending = await q(dbs.reviewed!.id, sql);
    expect(pending.data).toMatchObject({ status: 'pending_review', reviews_required: 1 });
    const requestId = pending.data!.request_id as string;
    expect((await callTool(mcp, 'get_query_request', { request_id: requestId })).data).toMatchObject({
      status: 'pending',
      statement: sql,
      approvals: 0,
      yours: true,
    });
    const [admin] = await svc.deps.sql<
      { id: string }[]
    >`select id from users where lower(email) = ${svc.admin.email}`;
    await reviewRequest(
      svc.deps,
      userCaller(orgId, { kind: 'user', userId: admin!.id, role: 'super_admin' }),
      requestId,
      { verdict: 'approve', body: 'ok' },
    );
    const ran = await callTool(mcp, 'run_query', { request_id: requestId });
    expect(ran.data).toMatchObject({ status: 'executed', rows: [['20']], request_id: requestId });
  });

  it('cancel_query withdraws a pending request', async () => {
    const pending = await q(dbs.reviewed!.id, 'select 2');
    const out = await callTool(mcp, 'cancel_query', { request_id: pending.data!.request_id });
    expect(out.data).toMatchObject({ status: 'canceled' });
  });
});

describe('schema tools', () => {
  it('get_database_schema, search_schema and sample_table see the table', async () => {
    const schema = await callTool(mcp, 'get_database_schema', { database_id: dbs.open!.id });
    const table = (schema.data!.tables as Array<{ name: string; columns: Array<{ name: string }> }>).find(
      (t) => t.name === TABLE,
    );
    expect(table?.columns.map((c) => c.name)).toEqual(['id', 'name', 'email']);
    const found = await callTool(mcp, 'search_schema', { query: TABLE, database_id: dbs.open!.id });
    expect(found.data!.matches).toContainEqual({
      database_id: dbs.open!.id,
      schema: 'public',
      table: TABLE,
      kind: 'table',
    });
    const sample = await callTool(mcp, 'sample_table', { database_id: dbs.open!.id, table: TABLE, limit: 3 });
    expect(sample.data).toMatchObject({ status: 'executed', columns: ['id', 'name', 'email'], num_rows: 3 });
    const missing = await callTool(mcp, 'sample_table', {
      database_id: dbs.open!.id,
      table: 'nope; drop table x',
    });
    expect(missing.isError).toBe(true);
  });

  it('schema tools refuse a database without ai_enabled', async () => {
    const out = await callTool(mcp, 'get_database_schema', { database_id: dbs.noAi!.id });
    expect(out.isError).toBe(true);
  });
});

describe('get_data_protection and query_history', () => {
  it('describes the policy per database (none assigned here)', async () => {
    const out = await callTool(mcp, 'get_data_protection', { database_id: dbs.open!.id });
    expect(out.data).toEqual({
      databases: [{ database_id: dbs.open!.id, name: 'open', policy: null, columns: [], notes: [] }],
    });
  });

  it('names what the user’s policy masks', async () => {
    const db = await registerDatabase(svc, { name: 'protected' });
    const res = await svc.fetch(`/api/v1/desk/databases/${db.id}/policies`, {
      method: 'POST',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'mask email',
        rules: [
          { table: TABLE, column: '*', action: 'show' },
          { table: TABLE, column: 'email', action: 'mask' },
        ],
        assignments: { users: [memberId] },
      }),
    });
    expect(res.status).toBe(201);
    const described = await callTool(mcp, 'get_data_protection', { database_id: db.id });
    const entry = (described.data!.databases as Array<Record<string, unknown>>)[0]!;
    expect(entry.policy).toMatchObject({ name: 'mask email' });
    expect(entry.columns).toContainEqual({ schema: 'public', table: TABLE, column: 'email', action: 'mask' });
    protectedDb = db.id;
  });

  it('run_query results come back redacted by the user’s policy', async () => {
    const out = await q(protectedDb, `select id, email from ${TABLE} where id = 1`);
    expect(out.data).toMatchObject({ status: 'executed', rows: [[1, '****']] });
  });

  it('query_history shows the user’s AI activity, newest first, with the client name', async () => {
    const out = await callTool(mcp, 'query_history', { limit: 50 });
    const entries = out.data!.entries as Array<{ client: string; statement?: string; tool?: string }>;
    expect(entries.length).toBeGreaterThan(5);
    expect(entries.every((e) => e.client === 'Test AI client')).toBe(true);
    expect(entries.some((e) => e.statement === `select id from ${TABLE} order by id`)).toBe(true);
    expect(entries.some((e) => e.tool === 'list_databases')).toBe(true);
  });

  it('refuses invalid arguments as a tool error', async () => {
    const out = await callTool(mcp, 'sample_table', { database_id: dbs.open!.id, table: TABLE, limit: 1000 });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('invalid arguments');
  });
});
