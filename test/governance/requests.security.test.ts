import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { newId } from '../../store/ids.ts';
import { insertOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { json, type Person, type RequestJson, type SubmitJson, startWorld, type World } from './world.ts';

let w: World;
let author: Person;
let stranger: Person;
let otherOrg: Person;
let hidden: { id: string };
let visible: { id: string };
let requestId: string;

beforeAll(async () => {
  w = await startWorld();
  author = await w.person('member', 'author');
  stranger = await w.person('member', 'stranger');
  visible = await w.database('postgres', {}, 1);
  hidden = await w.database('postgres', { restrict_access: true }, 1);
  await w.as('key', 'POST', `/api/v1/desk/databases/${hidden.id}/grants`, { user_id: author.id });
  const res = await w.as(author, 'POST', '/api/v1/desk/query-requests', {
    database_id: hidden.id,
    statement: 'select 1',
  });
  requestId = (await json<SubmitJson>(res)).request!.id;
  await w.as(author, 'POST', '/api/v1/desk/query-requests', {
    database_id: visible.id,
    statement: 'select 2',
  });
  // A second organization with its own user.
  const org = await insertOrganization(w.svc.deps.sql, { id: newId('org'), name: 'other' });
  const user = await createUser(w.svc.deps.sql, {
    orgId: org.id,
    email: 'other@example.test',
    role: 'super_admin',
    password: null,
  });
  const { secret } = await createPersonalToken(w.svc.deps.sql, {
    userId: user.id,
    name: 't',
    expiresAt: null,
  });
  otherOrg = { id: user.id, email: user.email, role: 'super_admin', token: secret };
});
afterAll(async () => w?.stop());

const path = (suffix = '') => `/api/v1/desk/query-requests${suffix}`;

describe('query requests: common security cases', () => {
  it('need credentials, and a wrong one is a 401', async () => {
    expect((await w.svc.fetch(path())).status).toBe(401);
    expect((await w.svc.fetch(path(), { headers: { 'x-api-key': 'cskey_wrong' } })).status).toBe(401);
    expect((await w.svc.fetch(path(), { headers: { authorization: 'Bearer pat_nope' } })).status).toBe(401);
  });

  it('are invisible across organizations, even to a super admin', async () => {
    expect((await w.as(otherOrg, 'GET', path(`/${requestId}`))).status).toBe(404);
    expect((await w.as(otherOrg, 'POST', path(`/${requestId}/approve`), {})).status).toBe(404);
    expect((await w.as(otherOrg, 'POST', path(`/${requestId}/run`), {})).status).toBe(404);
    const list = await json<{ data: RequestJson[] }>(await w.as(otherOrg, 'GET', path()));
    expect(list.data).toEqual([]);
  });

  it('on a restricted database are a 404 to users without a grant, and left out of listings', async () => {
    expect((await w.as(stranger, 'GET', path(`/${requestId}`))).status).toBe(404);
    expect((await w.as(stranger, 'POST', path(`/${requestId}/approve`), {})).status).toBe(404);
    expect((await w.as(stranger, 'POST', path(`/${requestId}/comments`), { comment: 'hi' })).status).toBe(
      404,
    );
    const list = await json<{ data: RequestJson[] }>(await w.as(stranger, 'GET', path()));
    expect(list.data.map((r) => r.id)).not.toContain(requestId);
    expect(list.data).toHaveLength(1);
    const mine = await json<{ data: RequestJson[] }>(
      await w.as(author, 'GET', path('?mine=true&status=pending')),
    );
    expect(mine.data).toHaveLength(2);
  });

  it('validate their input', async () => {
    const res = await w.as(author, 'POST', path(), { database_id: visible.id, statement: '', params: [{}] });
    expect(res.status).toBe(422);
    const paths = (await json<{ errors: Array<{ path: string }> }>(res)).errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['statement', 'params.0']));
  });

  it('with a session cookie need the CSRF token on unsafe methods', async () => {
    const session = await signIn(w.svc, w.svc.admin.email, w.svc.admin.password);
    const body = JSON.stringify({ database_id: visible.id, statement: 'select 3' });
    const headers = { cookie: session.cookie, 'content-type': 'application/json' };
    expect((await w.svc.fetch(path(), { method: 'POST', headers, body })).status).toBe(403);
    const ok = await w.svc.fetch(path(), {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': session.csrf },
      body,
    });
    expect(ok.status).toBe(202);
  });
});
