// No key above its owner: an API key carries its owner's identity (role, grants, data-protection
// policy) and dies with them; a service account is an owner with its own role, grants and policy;
// x-act-as-user works only for a key a super admin marked, never to review, audited with both
// identities. Everything through the REST API, as a key holder would try it.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import type { Role } from '../../store/users.ts';
import { servers } from '../harness/servers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let orgId: string;
let table: string;
let openDb: string;
let restrictedDb: string;
let reviewedDb: string;
let n = 0;

interface Person {
  id: string;
  email: string;
  token: string;
}
interface KeyJson {
  id: string;
  key: string;
  owner: { kind: string; user_id: string; role: string } | null;
  act_as_allowed: boolean;
}

function call(
  method: string,
  path: string,
  auth: { key: string } | { token: string },
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return svc.fetch(path, {
    method,
    headers: {
      ...('key' in auth ? { 'x-api-key': auth.key } : { authorization: `Bearer ${auth.token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const rootKey = () => ({ key: svc.apiKey });

async function person(role: Role): Promise<Person> {
  const email = `keys-${role}-${++n}@example.test`;
  const user = await createUser(svc.deps.sql, { orgId, email, role, password: null });
  const { secret } = await createPersonalToken(svc.deps.sql, { userId: user.id, name: 't', expiresAt: null });
  return { id: user.id, email, token: secret };
}

async function newKey(by: { token: string } | { key: string }, body: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/v1/api-keys', by, { name: `key ${++n}`, ...body });
  expect(res.status).toBe(201);
  return (await res.json()) as KeyJson;
}

async function register(name: string, extra: Record<string, unknown>, reviews: number): Promise<string> {
  const pg = servers().postgres;
  const res = await call('POST', '/api/v1/desk/databases', rootKey(), {
    name,
    adapter: 'postgres',
    hostname: pg.host,
    port: pg.port,
    database: pg.database,
    credentials: [
      { username: pg.user, password: pg.password, reviews_required: reviews, default_credential: true },
    ],
    ...extra,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

function targetSql() {
  const pg = servers().postgres;
  return postgres({
    host: pg.host,
    port: pg.port,
    user: pg.user,
    password: pg.password,
    database: pg.database,
    max: 1,
    onnotice: () => {},
  });
}

beforeAll(async () => {
  svc = await startTestService();
  orgId = (await svc.deps.sql<{ id: string }[]>`select id from organizations`)[0]!.id;
  table = `keys_${randomBytes(5).toString('hex')}`;
  const t = targetSql();
  try {
    await t`create table ${t(table)} (id int primary key, ssn text)`;
    await t`insert into ${t(table)} values (1, 'SSN-000011')`;
  } finally {
    await t.end();
  }
  openDb = await register('open', {}, 0);
  restrictedDb = await register('restricted', { restrict_access: true }, 0);
  reviewedDb = await register('reviewed', {}, 1);
});

afterAll(async () => {
  const t = targetSql();
  await t`drop table if exists ${t(table)}`.finally(() => t.end());
  await svc?.stop();
});

async function ssnSeenBy(auth: { key: string } | { token: string }): Promise<unknown> {
  const res = await call('POST', '/api/v1/desk/query-requests', auth, {
    database_id: openDb,
    statement: `select id, ssn from ${table}`,
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { rows: unknown[][] } };
  return body.result.rows[0]![1];
}

describe('an owned key is its owner, never more', () => {
  it("reads through the owner's data-protection policy: a masked column stays masked", async () => {
    const admin = await person('admin');
    const policy = await call('POST', `/api/v1/desk/databases/${openDb}/policies`, rootKey(), {
      name: `mask for ${admin.email}`,
      rules: [
        { table, column: 'id', action: 'show' },
        { table, column: 'ssn', action: 'mask' },
      ],
      assignments: { users: [admin.id] },
    });
    expect(policy.status).toBe(201);
    expect(await ssnSeenBy({ token: admin.token })).not.toBe('SSN-000011');
    const key = await newKey({ token: admin.token });
    expect(await ssnSeenBy({ key: key.key })).not.toBe('SSN-000011');
    expect(key.owner).toMatchObject({ kind: 'person', user_id: admin.id, role: 'admin' });
    const me = (await (await call('GET', '/api/v1/me', { key: key.key })).json()) as Record<string, unknown>;
    expect(me).toMatchObject({
      kind: 'api_key',
      user_id: admin.id,
      role: 'admin',
      via: 'api_key',
      api_key_id: key.id,
    });
  });

  it('follows its owner: disabled, the key is refused (401) and stays so when the owner is enabled again', async () => {
    const admin = await person('admin');
    const key = await newKey({ token: admin.token });
    expect((await call('GET', '/api/v1/me', { key: key.key })).status).toBe(200);
    const off = await call('PATCH', `/api/v1/users/${admin.id}`, rootKey(), { disabled: true });
    expect(off.status).toBe(200);
    expect((await call('GET', '/api/v1/desk/databases', { key: key.key })).status).toBe(401);
    await call('PATCH', `/api/v1/users/${admin.id}`, rootKey(), { disabled: false });
    expect((await call('GET', '/api/v1/desk/databases', { key: key.key })).status).toBe(401);
  });

  it('dies with its owner deleted (401)', async () => {
    const admin = await person('admin');
    const key = await newKey({ token: admin.token });
    expect((await call('DELETE', `/api/v1/users/${admin.id}`, rootKey())).status).toBe(200);
    expect((await call('GET', '/api/v1/me', { key: key.key })).status).toBe(401);
  });

  it('is refused as soon as the owner is disabled by any path, even with the key row untouched', async () => {
    const admin = await person('admin');
    const key = await newKey({ token: admin.token });
    await svc.deps.sql`update users set disabled_at = now() where id = ${admin.id}`;
    expect((await call('GET', '/api/v1/me', { key: key.key })).status).toBe(401);
  });

  it("has the owner's role now: an admin demoted to member holds a member's key", async () => {
    const admin = await person('admin');
    const key = await newKey({ token: admin.token });
    expect((await call('GET', '/api/v1/users', { key: key.key })).status).toBe(200);
    const demote = await call('PATCH', `/api/v1/users/${admin.id}`, rootKey(), { role: 'member' });
    expect(demote.status).toBe(200);
    expect((await call('GET', '/api/v1/users', { key: key.key })).status).toBe(403);
  });

  it("sees a restricted database only with the owner's grant", async () => {
    const admin = await person('admin');
    const key = await newKey({ token: admin.token });
    const listed = async () =>
      (
        (await (await call('GET', '/api/v1/desk/databases', { key: key.key })).json()) as {
          data: Array<{ id: string }>;
        }
      ).data.map((d) => d.id);
    expect(await listed()).not.toContain(restrictedDb);
    expect((await call('GET', `/api/v1/desk/databases/${restrictedDb}`, { key: key.key })).status).toBe(404);
  });
});

describe('service accounts', () => {
  it('have their own role, grants and policy; never super admin; never review', async () => {
    const admin = await person('admin');
    const superSvc = await call(
      'POST',
      '/api/v1/api-keys',
      { token: admin.token },
      {
        name: 'too high',
        service_account: { role: 'super_admin' },
      },
    );
    expect(superSvc.status).toBe(422);
    const problem = (await superSvc.json()) as { errors?: Array<{ path: string }> };
    expect(problem.errors?.map((e) => e.path).join(' ')).toContain('service_account');

    const key = await newKey({ token: admin.token }, { service_account: { role: 'member' } });
    expect(key.owner).toMatchObject({ kind: 'service_account', role: 'member' });
    const svcUser = key.owner!.user_id;
    expect(svcUser).not.toBe(admin.id);
    const me = (await (await call('GET', '/api/v1/me', { key: key.key })).json()) as Record<string, unknown>;
    expect(me).toMatchObject({ user_id: svcUser, role: 'member', service_account: true });
    // A member: no admin routes, and a restricted database only with a grant of its own.
    expect((await call('GET', '/api/v1/users', { key: key.key })).status).toBe(403);
    expect((await call('GET', `/api/v1/desk/databases/${restrictedDb}`, { key: key.key })).status).toBe(404);
    const grant = await call('POST', `/api/v1/desk/databases/${restrictedDb}/grants`, rootKey(), {
      user_id: svcUser,
    });
    expect(grant.status).toBe(201);
    expect((await call('GET', `/api/v1/desk/databases/${restrictedDb}`, { key: key.key })).status).toBe(200);

    // Its own data-protection policy applies to it.
    const policy = await call('POST', `/api/v1/desk/databases/${openDb}/policies`, rootKey(), {
      name: `mask for ${svcUser}`,
      rules: [
        { table, column: 'id', action: 'show' },
        { table, column: 'ssn', action: 'mask' },
      ],
      assignments: { users: [svcUser] },
    });
    expect(policy.status).toBe(201);
    expect(await ssnSeenBy({ key: key.key })).not.toBe('SSN-000011');

    // An admin's own service account is no second pair of eyes on the admin's write.
    const write = await call(
      'POST',
      '/api/v1/desk/query-requests',
      { token: admin.token },
      {
        database_id: reviewedDb,
        statement: `update ${table} set ssn = ssn where id = 1`,
      },
    );
    expect(write.status).toBe(202);
    const id = ((await write.json()) as { request: { id: string } }).request.id;
    const adminSvc = await newKey({ token: admin.token }, { service_account: { role: 'admin' } });
    const approve = await call(
      'POST',
      `/api/v1/desk/query-requests/${id}/approve`,
      { key: adminSvc.key },
      {},
    );
    expect(approve.status).toBe(403);
    const req = (await (
      await call('GET', `/api/v1/desk/query-requests/${id}`, { token: admin.token })
    ).json()) as { status: string };
    expect(req.status).toBe('pending');

    // Disabled on the People API like anyone, its key dies.
    expect((await call('PATCH', `/api/v1/users/${svcUser}`, rootKey(), { disabled: true })).status).toBe(200);
    expect((await call('GET', '/api/v1/me', { key: key.key })).status).toBe(401);
  });

  it('are never made super admin later either', async () => {
    const key = await newKey(rootKey(), { service_account: { role: 'admin' } });
    // Even a super admin in person (no key may grant super admin at all) cannot.
    const res = await call('PATCH', `/api/v1/users/${key.owner!.user_id}`, await person('super_admin'), {
      role: 'super_admin',
    });
    expect(res.status).toBe(422);
    const me = (await (await call('GET', '/api/v1/me', { key: key.key })).json()) as { role: string };
    expect(me.role).toBe('admin');
  });
});

describe('x-act-as-user', () => {
  it('is refused for a key no super admin marked, and only a super admin in person may mark one', async () => {
    const member = await person('member');
    const admin = await person('admin');
    const asMember = { 'x-act-as-user': member.email };
    expect((await call('GET', '/api/v1/me', rootKey(), undefined, asMember)).status).toBe(403);
    const keyId = `key_${svc.apiKey.split('_')[1]}`;
    // Not an admin, not a key (even the super admin's own), not a service account: a super admin.
    expect(
      (await call('PATCH', `/api/v1/api-keys/${keyId}`, { token: admin.token }, { act_as_allowed: true }))
        .status,
    ).toBe(403);
    expect(
      (await call('PATCH', `/api/v1/api-keys/${keyId}`, rootKey(), { act_as_allowed: true })).status,
    ).toBe(403);
    const asCreated = await call(
      'POST',
      '/api/v1/api-keys',
      { token: admin.token },
      {
        name: 'self-marked',
        act_as_allowed: true,
      },
    );
    expect(asCreated.status).toBe(403);
    expect((await call('GET', '/api/v1/me', rootKey(), undefined, asMember)).status).toBe(403);
  });

  it('acts for a person when marked, audited with both identities, and never reviews', async () => {
    const root = await svc.deps.sql<{ id: string }[]>`select id from users where email = ${svc.admin.email}`;
    const rootToken = (
      await createPersonalToken(svc.deps.sql, { userId: root[0]!.id, name: 'root', expiresAt: null })
    ).secret;
    const admin = await person('admin');
    const member = await person('member');
    const key = await newKey({ token: admin.token });
    const mark = await call(
      'PATCH',
      `/api/v1/api-keys/${key.id}`,
      { token: rootToken },
      { act_as_allowed: true },
    );
    expect(mark.status).toBe(204);

    const me = await call('GET', '/api/v1/me', { key: key.key }, undefined, {
      'x-act-as-user': member.email,
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      kind: 'user',
      user_id: member.id,
      role: 'member',
      acted_by: { api_key_id: key.id, owner_user_id: admin.id },
    });
    const audited = await svc.deps.sql<
      { actor_user_id: string; actor_api_key_id: string; subject: unknown }[]
    >`
      select actor_user_id, actor_api_key_id, subject from audit_log
      where event = 'api_key.act_as' and actor_api_key_id = ${key.id}`;
    expect(audited.length).toBeGreaterThan(0);
    expect(audited[0]).toMatchObject({
      actor_user_id: member.id,
      actor_api_key_id: key.id,
      subject: { api_key_id: key.id, key_owner_id: admin.id, user_id: member.id },
    });

    // Never above the owner: acting for a super admin is refused, naming the header.
    const up = await call('GET', '/api/v1/me', { key: key.key }, undefined, {
      'x-act-as-user': svc.admin.email,
    });
    expect(up.status).toBe(422);
    expect(((await up.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe('x-act-as-user');

    // The admin writes; "as" the member their key would approve it: refused, and so is any verdict.
    const write = await call(
      'POST',
      '/api/v1/desk/query-requests',
      { token: admin.token },
      {
        database_id: reviewedDb,
        statement: `update ${table} set ssn = ssn where id = 1`,
      },
    );
    expect(write.status).toBe(202);
    const id = ((await write.json()) as { request: { id: string } }).request.id;
    const asMember = { 'x-act-as-user': member.id };
    for (const verdict of ['approve', 'reject', 'comments']) {
      const res = await call(
        'POST',
        `/api/v1/desk/query-requests/${id}/${verdict}`,
        { key: key.key },
        {
          comment: 'looks fine',
        },
        asMember,
      );
      expect(res.status, verdict).toBe(403);
    }
    const req = (await (
      await call('GET', `/api/v1/desk/query-requests/${id}`, { token: admin.token })
    ).json()) as { status: string; reviews: unknown[] };
    expect(req).toMatchObject({ status: 'pending', reviews: [] });
  });
});
