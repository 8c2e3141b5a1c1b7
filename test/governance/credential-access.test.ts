// A credential may be limited to named users and roles, and the limit holds in
// every origin — REST, console, dashboard panel, MCP — so an unreviewed credential beside a
// reviewed one cannot be used to skip the review by anyone it was not given to.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../identity/manage.ts';
import { servers } from '../harness/servers.ts';
import { withHarnessPostgres } from '../helpers/harness-postgres.ts';
import { signIn } from '../helpers/service.ts';
import { callTool, mcpClient } from '../mcp/target.ts';
import { connect } from '../oauth/flow.ts';
import { json, type Person, startWorld, type World } from './world.ts';

let w: World;
let allowed: Person;
let other: Person;
let databaseId: string;
let openCred: string;
let reviewedCred: string;
const role = `cs_open_${Date.now()}`;
const rolePassword = 'open role password 1';

const admin = withHarnessPostgres;

beforeAll(async () => {
  w = await startWorld();
  allowed = await w.person('member', 'allowed');
  other = await w.person('member', 'other');
  await admin(async (sql) => {
    await sql.unsafe(`create role ${role} login password '${rolePassword}'`);
    await sql.unsafe(`grant select on ${w.table} to ${role}`);
  });
  const pg = servers().postgres;
  const db = await w.database('postgres', { ai_enabled: true }, 1, { ai_allowed: true });
  databaseId = db.id;
  reviewedCred = db.credentials[0]!.id;
  const patched = await w.as('key', 'PATCH', `/api/v1/desk/databases/${db.id}`, {
    credentials: [
      {
        username: role,
        password: rolePassword,
        hostname: pg.host,
        reviews_required: 0,
        ai_allowed: true,
        restrict_access: true,
      },
    ],
  });
  expect(patched.status).toBe(200);
  const body = await json<{ credentials: Array<{ id: string; username: string; restrict_access: boolean }> }>(
    patched,
  );
  const open = body.credentials.find((c) => c.username === role)!;
  expect(open.restrict_access).toBe(true);
  openCred = open.id;
  const granted = await w.as(
    'key',
    'POST',
    `/api/v1/desk/databases/${db.id}/credentials/${openCred}/grants`,
    {
      user_id: allowed.id,
    },
  );
  expect(granted.status).toBe(201);
});
afterAll(async () => {
  await w?.stop();
  await admin((sql) => sql.unsafe(`drop owned by ${role}; drop role if exists ${role}`)).catch(() => {});
});

const submit = (who: Person, credential_id: string) =>
  w.as(who, 'POST', '/api/v1/desk/query-requests', {
    database_id: databaseId,
    credential_id,
    statement: `select count(*)::int as n from ${w.table}`,
  });

describe('a restricted credential', () => {
  it('REST: the granted member runs as it at once; another member gets 404, audited as denied', async () => {
    const ok = await submit(allowed, openCred);
    expect(ok.status).toBe(200);
    expect((await json<{ result: { rows: unknown[][] } }>(ok)).result.rows).toEqual([[3]]);
    const refused = await submit(other, openCred);
    expect(refused.status).toBe(404);
    expect((await json<{ detail: string }>(refused)).detail).toBe('no such credential');
    const [denied] = await w.svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where actor_user_id = ${other.id} and outcome = 'denied'`;
    expect(denied!.n).toBeGreaterThanOrEqual(1);
    // The reviewed credential still works for them, through review.
    expect((await submit(other, reviewedCred)).status).toBe(202);
  });

  it('listings show a member only the credentials they may use', async () => {
    const seen = async (who: Person) =>
      (
        await json<{ credentials: Array<{ id: string }> }>(
          await w.as(who, 'GET', `/api/v1/desk/databases/${databaseId}`),
        )
      ).credentials.map((c) => c.id);
    expect(await seen(allowed)).toContain(openCred);
    expect(await seen(other)).not.toContain(openCred);
    expect(await seen(other)).toContain(reviewedCred);
  });

  it('console: the other member is refused', async () => {
    const person = await createUser(w.svc.deps.sql, {
      orgId: w.orgId,
      email: 'console-other@example.test',
      role: 'member',
      password: 'console password 123',
    });
    const s = await signIn(w.svc, person.email, 'console password 123');
    const res = await w.svc.fetch('/console', {
      method: 'POST',
      headers: { cookie: s.cookie },
      body: new URLSearchParams({
        _csrf: s.csrf,
        credential: `${databaseId}/${openCred}`,
        statement: 'select 1',
      }),
    });
    expect(await res.text()).toContain('no such credential');
  });

  it('dashboard panel: runs for the granted member, 404 for the other', async () => {
    const created = await w.as(w.root, 'POST', '/v1/dashboards', {
      name: 'open credential panel',
      restricted_access: false,
      panels: [
        {
          title: 'count',
          details: { __type__: 'query', query: `select count(*) from ${w.table}`, credential_id: openCred },
        },
      ],
    });
    expect(created.status).toBe(201);
    const dash = await json<{ id: string; panels: Array<{ id: string }> }>(created);
    const run = (who: Person) =>
      w.as(who, 'POST', `/v1/dashboards/${dash.id}/panels/${dash.panels[0]!.id}/run`, { inputs: {} });
    expect((await run(allowed)).status).toBe(200);
    expect((await run(other)).status).toBe(404);
  });

  it('MCP: the other member neither sees nor uses it; a role grant opens it; revoking closes it again', async () => {
    const otherUser = await createUser(w.svc.deps.sql, {
      orgId: w.orgId,
      email: 'mcp-other@example.test',
      role: 'member',
      password: 'mcp password 1234',
    });
    const mcp: Client = await mcpClient(
      w.svc,
      (await connect(w.svc, { email: otherUser.email, password: 'mcp password 1234' })).tokens.access_token,
    );
    try {
      const listed = await callTool(mcp, 'list_databases', {});
      const dbs = listed.data!.databases as Array<{ id: string; credentials: Array<{ id: string }> }>;
      expect(dbs.find((d) => d.id === databaseId)!.credentials.map((c) => c.id)).not.toContain(openCred);
      const q = () =>
        callTool(mcp, 'run_query', {
          database_id: databaseId,
          credential_id: openCred,
          sql: 'select 1 as one',
        });
      const refused = await q();
      expect(refused.isError).toBe(true);
      expect(refused.text).toBe('no such credential');

      const grant = await w.as(
        'key',
        'POST',
        `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants`,
        {
          role: 'member',
        },
      );
      expect(grant.status).toBe(201);
      const grantId = (await json<{ id: string }>(grant)).id;
      expect((await q()).data).toMatchObject({ status: 'executed', rows: [[1]] });

      const removed = await w.as(
        'key',
        'DELETE',
        `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants/${grantId}`,
      );
      expect(removed.status).toBe(200);
      expect((await q()).isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it('a grant naming both a user and a role is a 422 naming the field, and changes nothing', async () => {
    const before = await w.as(
      'key',
      'GET',
      `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants`,
    );
    const count = (await json<{ data: unknown[] }>(before)).data.length;
    const bad = await w.as(
      'key',
      'POST',
      `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants`,
      {
        user_id: other.id,
        role: 'member',
      },
    );
    expect(bad.status).toBe(422);
    expect((await json<{ errors: Array<{ path: string }> }>(bad)).errors[0]!.path).toBe('user_id');
    const after = await w.as(
      'key',
      'GET',
      `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants`,
    );
    const listed = await json<{ restrict_access: boolean; data: unknown[] }>(after);
    expect(listed.data.length).toBe(count);
    expect(listed.restrict_access).toBe(true);
    // A member cannot manage credential grants.
    expect(
      (
        await w.as(other, 'POST', `/api/v1/desk/databases/${databaseId}/credentials/${openCred}/grants`, {
          role: 'member',
        })
      ).status,
    ).toBe(403);
  });
});
