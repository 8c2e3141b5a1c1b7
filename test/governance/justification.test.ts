// A credential can require a justification for queries that wait
// for its reviews, and every revision of a request's SQL is kept for the reviewers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type Person, startWorld, type World } from './world.ts';

let w: World;
let author: Person;
let db: { id: string; credentials: Array<{ id: string }> };
const base = '/api/v1/desk/query-requests';

beforeAll(async () => {
  w = await startWorld();
  author = await w.person('member', 'author');
  db = await w.database('postgres', {}, 1, { justification_required: true });
});
afterAll(async () => w?.stop());

describe('justification and revisions', () => {
  it('the credential says it requires a justification', async () => {
    const got = await json<{ credentials: Array<{ justification_required: boolean }> }>(
      await w.as('key', 'GET', `/api/v1/desk/databases/${db.id}`),
    );
    expect(got.credentials[0]!.justification_required).toBe(true);
  });

  it('a request without one is a 422 naming the field, audited as denied, and creates nothing', async () => {
    const before = (await w.svc.deps.sql<{ n: number }[]>`select count(*)::int as n from query_requests`)[0]!
      .n;
    const res = await w.as(author, 'POST', base, {
      database_id: db.id,
      statement: `select * from ${w.table}`,
    });
    expect(res.status).toBe(422);
    expect((await json<{ errors: Array<{ path: string }> }>(res)).errors[0]!.path).toBe('justification');
    expect((await w.svc.deps.sql<{ n: number }[]>`select count(*)::int as n from query_requests`)[0]!.n).toBe(
      before,
    );
    const [denied] = await w.svc.deps.sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where actor_user_id = ${author.id} and outcome = 'denied'`;
    expect(denied!.n).toBe(1);
  });

  it('with one, the request carries it, and each edit keeps the earlier revision', async () => {
    const res = await w.as(author, 'POST', base, {
      database_id: db.id,
      statement: `select id from ${w.table}`,
      justification: 'ticket SUP-12: customer asked for their data',
    });
    expect(res.status).toBe(202);
    const { request } = await json<{ request: { id: string; justification: string; revision: number } }>(res);
    expect(request.justification).toBe('ticket SUP-12: customer asked for their data');
    const edited = await w.as(author, 'PATCH', `${base}/${request.id}`, {
      statement: `select id, name from ${w.table}`,
    });
    expect(edited.status).toBe(200);
    const revisions = await w.svc.deps.sql<{ revision: number; statement: string }[]>`
      select revision, statement from query_request_revisions where request_id = ${request.id} order by revision`;
    expect(revisions).toEqual([
      { revision: 1, statement: `select id from ${w.table}` },
      { revision: 2, statement: `select id, name from ${w.table}` },
    ]);
  });
});
