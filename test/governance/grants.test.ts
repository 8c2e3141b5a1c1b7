import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type Person, type SubmitJson, startWorld, type World } from './world.ts';

let w: World;
let admin: Person;
let member: Person;
let outsider: Person;
let restricted: { id: string };
let open: { id: string };

beforeAll(async () => {
  w = await startWorld();
  admin = await w.person('admin', 'admin');
  member = await w.person('member', 'member');
  outsider = await w.person('member', 'outsider');
  restricted = await w.database('postgres', { restrict_access: true });
  open = await w.database('postgres');
});
afterAll(async () => w?.stop());

const grants = (id: string) => `/api/v1/desk/databases/${id}/grants`;
const query = (who: Person, databaseId: string) =>
  w.as(who, 'POST', '/api/v1/desk/query-requests', {
    database_id: databaseId,
    statement: `select count(*)::int as n from ${w.table}`,
  });

describe('restrict_access databases (SPEC.md 2.2)', () => {
  it('are a 404, never a 403, to a user without a grant: read, query and listing', async () => {
    expect((await w.as(member, 'GET', `/api/v1/desk/databases/${restricted.id}`)).status).toBe(404);
    const denied = await query(member, restricted.id);
    expect(denied.status).toBe(404);
    const list = await json<{ data: Array<{ id: string }> }>(
      await w.as(member, 'GET', '/api/v1/desk/databases'),
    );
    expect(list.data.map((d) => d.id)).not.toContain(restricted.id);
    // The unrestricted database stays usable to the same user.
    expect((await query(member, open.id)).status).toBe(200);
  });

  it('become usable with a grant and invisible again when it is revoked', async () => {
    const created = await w.as('key', 'POST', grants(restricted.id), { user_id: member.id });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ database_id: restricted.id, user_id: member.id });
    // Granting twice changes nothing.
    expect((await w.as('key', 'POST', grants(restricted.id), { user_id: member.id })).status).toBe(200);

    const ran = await query(member, restricted.id);
    expect(ran.status).toBe(200);
    expect((await json<SubmitJson>(ran)).result?.rows).toEqual([[3]]);
    expect((await query(outsider, restricted.id)).status).toBe(404);

    const revoked = await w.as('key', 'DELETE', `${grants(restricted.id)}/${member.id}`);
    expect(revoked.status).toBe(200);
    expect((await query(member, restricted.id)).status).toBe(404);
    expect((await w.as('key', 'DELETE', `${grants(restricted.id)}/${member.id}`)).status).toBe(404);
  });

  it('are visible to super admins without a grant', async () => {
    expect((await w.as(w.root, 'GET', `/api/v1/desk/databases/${restricted.id}`)).status).toBe(200);
    expect((await query(w.root, restricted.id)).status).toBe(200);
  });
});

describe('grants API', () => {
  it('lists grants with the user they name', async () => {
    await w.as('key', 'POST', grants(restricted.id), { user_id: outsider.id });
    const list = await json<{ data: Array<{ user_id: string; email: string }> }>(
      await w.as(w.root, 'GET', grants(restricted.id)),
    );
    expect(list.data).toEqual([expect.objectContaining({ user_id: outsider.id, email: outsider.email })]);
  });

  it('is for admins only', async () => {
    expect((await w.as(member, 'GET', grants(open.id))).status).toBe(403);
    expect((await w.as(member, 'POST', grants(open.id), { user_id: member.id })).status).toBe(403);
  });

  it('answers 404 to an admin who cannot see the restricted database', async () => {
    expect((await w.as(admin, 'GET', grants(restricted.id))).status).toBe(404);
    expect((await w.as(admin, 'POST', grants(restricted.id), { user_id: admin.id })).status).toBe(404);
    // An admin manages grants of databases visible to them.
    expect((await w.as(admin, 'POST', grants(open.id), { user_id: member.id })).status).toBe(201);
  });

  it('refuses a user of no organization of ours, and unknown databases', async () => {
    const bad = await w.as('key', 'POST', grants(restricted.id), {
      user_id: 'usr_01J00000000000000000000000',
    });
    expect(bad.status).toBe(422);
    expect((await json<{ errors: Array<{ path: string }> }>(bad)).errors[0]?.path).toBe('user_id');
    expect((await w.as('key', 'GET', grants('db_01J00000000000000000000000'))).status).toBe(404);
  });

  it('needs credentials', async () => {
    expect((await w.svc.fetch(grants(open.id))).status).toBe(401);
  });
});
