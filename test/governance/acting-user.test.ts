// x-act-as-user is resolved once per request by the authentication middleware, so
// every route that acts through governance sees the user an organization key acts for, not
// only the query-request routes; and only an organization key may act for someone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseJson, type Person, startWorld, type World } from './world.ts';

let w: World;
let restricted: DatabaseJson;
let member: Person;
let granted: Person;

beforeAll(async () => {
  w = await startWorld();
  restricted = await w.database('postgres', { restrict_access: true });
  member = await w.person('member', 'plain');
  granted = await w.person('member', 'granted');
  const grant = await w.as('key', 'POST', `/api/v1/desk/databases/${restricted.id}/grants`, {
    user_id: granted.id,
  });
  expect(grant.status).toBe(201);
});

afterAll(async () => {
  await w?.stop();
});

async function listedIds(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: Array<{ id: string }> };
  return body.data.map((d) => d.id);
}

describe('x-act-as-user on every route', () => {
  it('the organization key alone sees the restricted database', async () => {
    expect(await listedIds(await w.as('key', 'GET', '/api/v1/desk/databases'))).toContain(restricted.id);
  });

  it('acting for a member without a grant, the database listing hides it and a read is a 404', async () => {
    const headers = { 'x-act-as-user': member.email };
    expect(
      await listedIds(await w.as('key', 'GET', '/api/v1/desk/databases', undefined, headers)),
    ).not.toContain(restricted.id);
    const grants = await w.as(
      'key',
      'GET',
      `/api/v1/desk/databases/${restricted.id}/grants`,
      undefined,
      headers,
    );
    expect([403, 404]).toContain(grants.status);
  });

  it('acting for a granted member, it is listed', async () => {
    const headers = { 'x-act-as-user': granted.id };
    expect(await listedIds(await w.as('key', 'GET', '/api/v1/desk/databases', undefined, headers))).toContain(
      restricted.id,
    );
  });

  it('a person may not act for someone else: 422 naming the header, nothing done', async () => {
    const res = await w.as(member, 'GET', '/api/v1/desk/databases', undefined, {
      'x-act-as-user': w.root.email,
    });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors?: Array<{ path: string }> };
    expect(problem.errors?.map((e) => e.path)).toContain('x-act-as-user');
  });

  it('acting for a member narrows the key to a member on admin routes (audit search, database changes)', async () => {
    const headers = { 'x-act-as-user': member.email };
    expect((await w.as('key', 'GET', '/api/v1/audit')).status).toBe(200);
    expect((await w.as('key', 'GET', '/api/v1/audit', undefined, headers)).status).toBe(403);
    const open = await w.database('postgres');
    const patch = await w.as(
      'key',
      'PATCH',
      `/api/v1/desk/databases/${open.id}`,
      { name: 'renamed' },
      headers,
    );
    expect(patch.status).toBe(403);
  });

  it('acting for a member, workflow runs are read as that member (run_permissions apply)', async () => {
    const created = await w.as('key', 'POST', '/api/v1/workflows', {
      name: 'Admins only',
      run_permissions: [{ role: 'admin' }],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await w.as('key', 'GET', `/api/v1/workflows/${id}/runs`)).status).toBe(200);
    const asMember = await w.as('key', 'GET', `/api/v1/workflows/${id}/runs`, undefined, {
      'x-act-as-user': member.id,
    });
    expect(asMember.status).toBe(404);
  });

  it('an unknown user is refused, naming the header', async () => {
    const res = await w.as('key', 'GET', '/api/v1/desk/databases', undefined, {
      'x-act-as-user': 'nobody@example.test',
    });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { errors?: Array<{ path: string }> };
    expect(problem.errors?.map((e) => e.path)).toContain('x-act-as-user');
  });
});
