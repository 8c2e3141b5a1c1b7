// Writes under a data-protection policy, through the public interfaces on the real servers: a
// member's harmless writes run (REST and MCP, PostgreSQL and MariaDB); every shape that would
// read a protected value is refused with the column named, at submission, and changes nothing.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GovernanceDeps } from '../../governance/query.ts';
import { createPersonalToken } from '../../identity/manage.ts';
import { addPerson } from '../helpers/service.ts';
import { callTool, mcpClient } from '../mcp/target.ts';
import { connect } from '../oauth/flow.ts';
import { rowsOf, SECRETS } from './protection-fixture.ts';
import { startMariadbTarget, startPostgresTarget, type Target } from './protection-targets.ts';

const memberId = (t: Target) => (t.fx.member.kind === 'user' ? t.fx.member.userId : '');

const ENGINES = [
  { name: 'PostgreSQL', start: startPostgresTarget, param: '$1' },
  { name: 'MariaDB', start: startMariadbTarget, param: '?' },
] as const;

describe.each(ENGINES)('writes under a policy on $name', ({ start, param }) => {
  let t: Target;
  let token: string;
  let credentialId: string;
  let mcp: Client;

  beforeAll(async () => {
    t = await start();
    const { svc } = t.fx;
    token = (await createPersonalToken(svc.deps.sql, { userId: memberId(t), name: 't', expiresAt: null }))
      .secret;
    // AI access for the MCP client.
    credentialId = (await credentials())[0]!.id;
    await patchCredential({ ai_allowed: true }, { ai_enabled: true });
    // The deployment lets AI clients write (GovernancePolicy.aiMayWrite), so MCP meets the same rules.
    (svc.deps as GovernanceDeps).policy = { aiMayWrite: async () => true };
    const person = { email: 'writer@example.test', password: 'writer password 123' };
    await addPerson(svc, person);
    const { tokens } = await connect(svc, person);
    mcp = await mcpClient(svc, tokens.access_token);
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await t?.stop();
  });

  const submit = (statement: string, params: unknown[] = []) =>
    t.fx.svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        database_id: t.fx.databaseId,
        statement,
        params,
      }),
    });
  const patchCredential = async (fields: Record<string, unknown>, db: Record<string, unknown> = {}) => {
    const res = await t.fx.svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': t.fx.svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ ...db, credentials: [{ id: credentialId, ...fields }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const credentials = async () => {
    const res = await t.fx.svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      headers: { 'x-api-key': t.fx.svc.apiKey },
    });
    return ((await res.json()) as { credentials: Array<{ id: string }> }).credentials;
  };
  const truth = async (sql: string) => rowsOf(await t.fx.attempt(sql, [], t.fx.unprotected));

  it('harmless writes run through REST: literal updates, inserts, deletes on visible columns, blind writes', async () => {
    for (const sql of [
      "update orders set note = 'refunded' where id = 1",
      'insert into orders (id, user_id, total) values (40, 1, 5)',
      'delete from orders where id = 40 and user_id = 1',
    ]) {
      const res = await submit(sql);
      expect(res.status, `${sql}: ${await res.clone().text()}`).toBe(200);
    }
    const blind = await submit(
      `update users set email = 'new@example.test', phone = ${param} where name = 'user3'`,
      ['+1-555-0000'],
    );
    expect(blind.status, await blind.clone().text()).toBe(200);
    expect(await truth('select note from orders where id = 1')).toEqual([['refunded']]);
    expect(await truth('select id from orders where id = 40')).toEqual([]);
    expect(await truth('select email, phone from users where id = 3')).toEqual([
      ['new@example.test', '+1-555-0000'],
    ]);
  });

  it('a value written into a hashed column is refused: a planted guess would match the stored hashes', async () => {
    const res = await submit(`update users set ssn = ${param} where id = 3`, [SECRETS.ssns[0]!]);
    expect(res.status).toBe(403);
    const problem = (await res.json()) as { detail: string };
    expect(problem.detail).toMatch(
      /UPDATE writes users\.ssn, which your data-protection policy shows hashed/,
    );
    expect(await truth('select ssn from users where id = 3')).toEqual([[SECRETS.ssns[2]!]]);
  });

  it.each([
    [
      "update orders set note = 'x' where user_id in (select id from users where ssn = '123-45-6789')",
      'users.ssn',
    ],
    ["update users set name = 'x' where email like 'alice%'", 'users.email'],
    ['update users set name = phone where id = 1', 'users.phone'],
    ['delete from orders where user_id in (select id from users where salary > 100000)', 'users.salary'],
    ['insert into orders (id, user_id, note) select id + 100, id, email from users', 'users.email'],
  ])('refused through REST, with the column named, changing nothing: %s', async (sql, column) => {
    const before = await truth('select id, note from orders order by id');
    const res = await submit(sql);
    expect(res.status).toBe(403);
    const problem = (await res.json()) as { detail: string; type: string };
    expect(problem.detail).toContain(column);
    for (const s of [...SECRETS.emails, ...SECRETS.ssns]) expect(problem.detail).not.toContain(s);
    expect(await truth('select id, note from orders order by id')).toEqual(before);
  });

  it('a refusal is decided at submission: no request is made for anyone to review, and an edit cannot bring one in', async () => {
    const list = async () =>
      (
        (await (
          await t.fx.svc.fetch(`/api/v1/desk/query-requests?database_id=${t.fx.databaseId}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as { data: Array<{ id: string }> }
      ).data.length;
    await patchCredential({ reviews_required: 1 });
    const count = await list();
    const refused = await submit("update users set name = 'x' where ssn = '123-45-6789'", []);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/users\.ssn.*WHERE/);
    expect(await list()).toBe(count);

    const ok = await submit("update orders set note = 'later' where id = 2");
    expect(ok.status).toBe(202);
    const id = ((await ok.json()) as { request: { id: string } }).request.id;
    const edit = await t.fx.svc.fetch(`/api/v1/desk/query-requests/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        statement: 'update orders set note = (select email from users where id = 1) where id = 2',
      }),
    });
    expect(edit.status).toBe(403);
    expect(((await edit.json()) as { detail: string }).detail).toContain('users.email');
    const got = await t.fx.svc.fetch(`/api/v1/desk/query-requests/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect((await got.json()) as { statement: string; revision: number }).toMatchObject({
      statement: "update orders set note = 'later' where id = 2",
      revision: 1,
    });
    await patchCredential({ reviews_required: 0 });
  });

  it('MCP: a harmless write runs, an exfiltrating one is refused with the column named', async () => {
    const ran = await callTool(mcp, 'run_query', {
      database_id: t.fx.databaseId,
      sql: "update orders set note = 'mcp' where id = 3",
    });
    expect(ran.isError, ran.text).toBe(false);
    expect(await truth('select note from orders where id = 3')).toEqual([['mcp']]);
    const refused = await callTool(mcp, 'run_query', {
      database_id: t.fx.databaseId,
      sql: "update orders set note = 'y' where user_id = (select id from users where email = 'bob.hidden@example.org')",
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('users.email');
    expect(await truth('select note from orders where id = 3')).toEqual([['mcp']]);
  });
});
