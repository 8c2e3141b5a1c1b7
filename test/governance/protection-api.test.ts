// Admin API of data-protection policies: happy path, errors, and the shared security cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let dbId: string;
let memberToken: string;
let memberId: string;

beforeAll(async () => {
  svc = await startTestService();
  const pg = servers().postgres;
  const res = await call('POST', '/api/v1/desk/databases', {
    name: 'protected',
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: 0, default_credential: true },
    ],
  });
  dbId = ((await res.json()) as { id: string }).id;
  const org = (await firstOrganization(svc.deps.sql))!;
  const member = await createUser(svc.deps.sql, {
    orgId: org.id,
    email: 'm@example.test',
    role: 'member',
    password: null,
  });
  memberId = member.id;
  memberToken = (await createPersonalToken(svc.deps.sql, { userId: member.id, name: 't', expiresAt: null }))
    .secret;
});
afterAll(async () => svc?.stop());

function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { 'x-api-key': svc.apiKey },
) {
  return svc.fetch(path, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
const base = () => `/api/v1/desk/databases/${dbId}/policies`;

describe('policies: happy path', () => {
  it('create, read, list, patch rules, assign, delete', async () => {
    const created = await call('POST', base(), {
      name: 'pii',
      rules: [
        { table: 'users', column: 'email', action: 'mask' },
        { schema: 'public', table: 'users', column: 'phone', action: 'partial', keep_last: 4 },
      ],
      assignments: { roles: ['member'] },
    });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toMatch(/salt/);
    const policy = JSON.parse(text);
    expect(policy.id).toMatch(/^dpp_[0-9A-Z]{26}$/);
    expect(policy.rules).toEqual([
      { schema: null, table: 'users', column: 'email', action: 'mask' },
      { schema: 'public', table: 'users', column: 'phone', action: 'partial', keep_first: 0, keep_last: 4 },
    ]);
    expect(policy.assignments).toEqual({ users: [], roles: ['member'] });

    const patched = await call('PATCH', `${base()}/${policy.id}`, {
      rules: [{ table: 'users', column: '*', action: 'show' }],
    });
    expect(((await patched.json()) as { rules: unknown[] }).rules).toEqual([
      { schema: null, table: 'users', column: '*', action: 'show' },
    ]);
    const assigned = await call('PUT', `${base()}/${policy.id}/assignments`, { users: [memberId] });
    expect(((await assigned.json()) as { assignments: unknown }).assignments).toEqual({
      users: [memberId],
      roles: [],
    });
    const list = (await (await call('GET', base())).json()) as { data: Array<{ id: string }> };
    expect(list.data.map((p) => p.id)).toEqual([policy.id]);
    expect((await call('DELETE', `${base()}/${policy.id}`)).status).toBe(200);
    expect((await call('GET', `${base()}/${policy.id}`)).status).toBe(404);
  });
});

describe('policies: errors', () => {
  it('422 names the bad field; 409 on a duplicate name; 404 for an unknown database', async () => {
    const bad = await call('POST', base(), {
      name: 'x',
      rules: [{ table: 'users', column: 'email', action: 'shred' }],
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
      'rules.0.action',
    );
    const partial = await call('POST', base(), {
      name: 'x',
      rules: [{ table: 'users', column: 'email', action: 'partial' }],
    });
    expect(partial.status).toBe(422);
    const unknownUser = await call('POST', base(), {
      name: 'y',
      rules: [],
      assignments: { users: ['usr_nope'] },
    });
    expect(unknownUser.status).toBe(422);
    expect((await call('POST', base(), { name: 'dup', rules: [] })).status).toBe(201);
    expect((await call('POST', base(), { name: 'dup', rules: [] })).status).toBe(409);
    expect((await call('GET', '/api/v1/desk/databases/db_01J00000000000000000000000/policies')).status).toBe(
      404,
    );
  });
});

describe('policies: security', () => {
  it('401 without credentials, 403 for a member (a policy decides what others may read)', async () => {
    expect((await svc.fetch(base())).status).toBe(401);
    expect((await call('GET', base(), undefined, { 'x-api-key': 'cskey_wrong' })).status).toBe(401);
    expect((await call('GET', base(), undefined, { authorization: `Bearer ${memberToken}` })).status).toBe(
      403,
    );
    expect(
      (await call('POST', base(), { name: 'mine', rules: [] }, { authorization: `Bearer ${memberToken}` }))
        .status,
    ).toBe(403);
  });

  it('an admin under a policy cannot loosen, delete or leave it; another admin can, and one may take a policy on', async () => {
    const org = (await firstOrganization(svc.deps.sql))!;
    const admin = async (email: string) => {
      const u = await createUser(svc.deps.sql, { orgId: org.id, email, role: 'admin', password: null });
      const token = (await createPersonalToken(svc.deps.sql, { userId: u.id, name: 't', expiresAt: null }))
        .secret;
      return { id: u.id, as: { authorization: `Bearer ${token}` } };
    };
    const ann = await admin('ann.admin@example.test');
    const bob = await admin('bob.admin@example.test');
    const hide = [{ table: 'users', column: 'ssn', action: 'hide' }];
    // Taking a policy on is allowed: Ann assigns one to herself.
    const made = await call(
      'POST',
      base(),
      { name: 'ann only', rules: hide, assignments: { users: [ann.id] } },
      ann.as,
    );
    expect(made.status, await made.clone().text()).toBe(201);
    const pid = ((await made.json()) as { id: string }).id;
    const showAll = [{ table: 'users', column: '*', action: 'show' }];
    for (const [method, path, body] of [
      ['PATCH', `${base()}/${pid}`, { rules: showAll }],
      ['DELETE', `${base()}/${pid}`, undefined],
      ['PUT', `${base()}/${pid}/assignments`, { users: [], roles: [] }],
    ] as const) {
      const res = await call(method, path, body, ann.as);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/applies to you/);
    }
    // Nor by a second policy of her own, assigned to her personally (her own assignment wins).
    const loosened = await call(
      'POST',
      base(),
      { name: 'ann loose', rules: showAll, assignments: { users: [ann.id] } },
      ann.as,
    );
    expect(loosened.status).toBe(403);
    const [kept] = await svc.deps.sql<Array<{ n: number }>>`
      select count(*)::int as n from data_protection_policies where name in ('ann loose')`;
    expect(kept!.n).toBe(0);
    // Another admin may change it.
    const byBob = await call('PATCH', `${base()}/${pid}`, { rules: showAll }, bob.as);
    expect(byBob.status, await byBob.clone().text()).toBe(200);
  });
});
