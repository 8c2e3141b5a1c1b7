// Risk levels that drive reviews, through REST on the real servers: a credential asks for more
// approvals (and approvers of a role) per level — DDL, write without WHERE, more than N rows,
// ordinary — and a request runs only once it has them. The level is assessed on submission and
// again on each edit, shown with why and "n of m approvals", and recorded in the audit chain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userCaller } from '../../audit/actors.ts';
import { editRequest } from '../../governance/requests.ts';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { startMariadbTarget, startPostgresTarget, type Target } from './protection-targets.ts';

type Who = 'author' | 'member1' | 'member2' | 'admin1';
interface Req {
  id: string;
  status: string;
  reviews_required: number;
  risk: { level: string; why: string } | null;
  approvals: { count: number; required: number; approver_role: string | null; summary: string };
}

function world(start: () => Promise<Target>) {
  const w = {
    t: undefined as unknown as Target,
    tokens: {} as Record<Who, string>,
    credentialId: '',
    async setUp() {
      w.t = await start();
      const { svc } = w.t.fx;
      const org = (await firstOrganization(svc.deps.sql))!;
      // The author is an admin: the fixture's data-protection policy is the members'.
      const people: Array<[Who, 'member' | 'admin']> = [
        ['author', 'admin'],
        ['member1', 'member'],
        ['member2', 'member'],
        ['admin1', 'admin'],
      ];
      for (const [who, role] of people) {
        const user = await createUser(svc.deps.sql, {
          orgId: org.id,
          email: `${who}@risk.example.test`,
          role,
          password: null,
        });
        w.tokens[who] = (
          await createPersonalToken(svc.deps.sql, { userId: user.id, name: 't', expiresAt: null })
        ).secret;
      }
      w.credentialId = (await w.database()).credentials[0]!.id as string;
    },
    async database(): Promise<{ credentials: Array<Record<string, unknown>> }> {
      const res = await w.t.fx.svc.fetch(`/api/v1/desk/databases/${w.t.fx.databaseId}`, {
        headers: { 'x-api-key': w.t.fx.svc.apiKey },
      });
      return res.json() as never;
    },
    patch(fields: Record<string, unknown>) {
      return w.t.fx.svc.fetch(`/api/v1/desk/databases/${w.t.fx.databaseId}`, {
        method: 'PATCH',
        headers: { 'x-api-key': w.t.fx.svc.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ credentials: [{ id: w.credentialId, ...fields }] }),
      });
    },
    call(who: Who, method: string, path: string, body?: unknown) {
      return w.t.fx.svc.fetch(`/api/v1/desk/query-requests${path}`, {
        method,
        headers: { authorization: `Bearer ${w.tokens[who]}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    },
    async submit(statement: string): Promise<Req> {
      const res = await w.call('author', 'POST', '', { database_id: w.t.fx.databaseId, statement });
      expect(res.status, await res.clone().text()).toBe(202);
      return ((await res.json()) as { request: Req }).request;
    },
    async get(id: string, who: Who = 'author'): Promise<Req> {
      const res = await w.call(who, 'GET', `/${id}`);
      expect(res.status).toBe(200);
      return res.json() as Promise<Req>;
    },
    approve(who: Who, id: string) {
      return w.call(who, 'POST', `/${id}/approve`, {});
    },
    run(id: string) {
      return w.call('author', 'POST', `/${id}/run`, {});
    },
  };
  return w;
}

describe('risk levels on PostgreSQL', () => {
  const w = world(startPostgresTarget);
  beforeAll(() => w.setUp(), 120_000);
  afterAll(async () => w.t?.stop());

  it('a credential takes N and the approvals per level; the change is audited', async () => {
    const res = await w.patch({
      reviews_required: 1,
      large_write_rows: 2,
      risk_reviews: { ddl: { reviews_required: 2 }, large: { reviews_required: 2 } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const cred = (await w.database()).credentials[0]!;
    expect(cred).toMatchObject({
      large_write_rows: 2,
      risk_reviews: { ddl: { reviews_required: 2 }, large: { reviews_required: 2 } },
    });
    const [event] = await w.t.fx.svc.deps.sql<Array<{ subject: { after: Record<string, unknown> } }>>`
      select subject from audit_log where event = 'database.updated' order by seq desc limit 1`;
    expect(event?.subject.after[`credential ${w.credentialId}`]).toMatchObject({
      large_write_rows: 2,
      risk_reviews: { ddl: { reviews_required: 2 } },
    });
  });

  it('DDL needs 2 approvals: 1 is not enough to run, the 2nd makes it runnable', async () => {
    const r = await w.submit('create table risk_ddl (id int)');
    expect(r).toMatchObject({ status: 'pending', reviews_required: 2, risk: { level: 'ddl' } });
    expect(r.risk?.why).toMatch(/structure/);
    expect((await w.approve('member1', r.id)).status).toBe(200);
    const one = await w.get(r.id);
    expect(one.status).toBe('pending');
    expect(one.approvals).toMatchObject({ count: 1, required: 2, summary: '1 of 2 approvals' });
    const early = await w.run(r.id);
    expect(early.status).toBe(403);
    expect(((await early.json()) as { detail: string }).detail).toMatch(/needs 2 approval/);
    expect(await w.t.fx.attempt('select count(*) from risk_ddl', [], w.t.fx.unprotected)).toHaveProperty(
      'failed',
    );
    expect((await w.approve('member2', r.id)).status).toBe(200);
    expect(await w.get(r.id)).toMatchObject({
      status: 'approved',
      approvals: { summary: '2 of 2 approvals' },
    });
    const ran = await w.run(r.id);
    expect(ran.status, await ran.clone().text()).toBe(200);
    expect(await w.t.fx.attempt('select count(*) from risk_ddl', [], w.t.fx.unprotected)).toHaveProperty(
      'rows',
    );
    // The level and what it required are in the hash-chained entry of the submission.
    const [entry] = await w.t.fx.svc.deps.sql<Array<{ reviews_required: number; detail: string }>>`
      select reviews_required, detail from audit_log where request_id = ${r.id} and outcome = 'pending'`;
    expect(entry?.reviews_required).toBe(2);
    expect(entry?.detail).toMatch(/2 approval\(s\); risk ddl: Create changes the structure/);
  });

  it('an edit assessed on a revision that another edit replaced meanwhile is refused, not stored with the old level', async () => {
    const r = await w.submit('select 1');
    expect(r.risk).toBeNull();
    const { svc } = w.t.fx;
    const [author] = await svc.deps.sql<Array<{ id: string; org_id: string }>>`
      select id, org_id from users where email = 'author@risk.example.test'`;
    const caller = userCaller(author!.org_id, { kind: 'user', userId: author!.id, role: 'admin' });
    // This edit (parameters only) is assessed on `select 1`, then held before its transaction.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held = () => {};
    const assessed = new Promise<void>((resolve) => {
      held = resolve;
    });
    const sql = new Proxy(svc.deps.sql, {
      get(target, key, receiver) {
        if (key !== 'begin') return Reflect.get(target, key, receiver);
        return async (...args: unknown[]) => {
          held();
          await gate;
          return (target.begin as (...a: unknown[]) => unknown)(...args);
        };
      },
    });
    const slow = editRequest({ ...svc.deps, sql }, caller, r.id, { params: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    await assessed;
    // Meanwhile the author turns it into DDL, which needs 2 approvals.
    const ddl = await w.call('author', 'PATCH', `/${r.id}`, { statement: 'create table risk_race (id int)' });
    expect(ddl.status, await ddl.clone().text()).toBe(200);
    release();
    expect(await slow).toMatchObject({ status: 409 });
    expect(await w.get(r.id)).toMatchObject({ reviews_required: 2, risk: { level: 'ddl' } });
  });

  it('an UPDATE touching more than N rows is large; an edit to fewer rows is assessed again', async () => {
    const r = await w.submit("update orders set note = 'bulk' where id <= 3");
    expect(r).toMatchObject({ reviews_required: 2, risk: { level: 'large' } });
    expect(r.risk?.why).toMatch(/3 rows, more than 2/);
    const small = await w.submit("update orders set note = 'one' where id = 1");
    expect(small).toMatchObject({ reviews_required: 1, risk: { level: 'ordinary' } });
    // One approval, then an edit: the approval is void, and the level drops with the row count.
    expect((await w.approve('member1', r.id)).status).toBe(200);
    const edited = await w.call('author', 'PATCH', `/${r.id}`, {
      statement: "update orders set note = 'one' where id = 2",
    });
    expect(edited.status, await edited.clone().text()).toBe(200);
    const after = await w.get(r.id);
    expect(after).toMatchObject({
      reviews_required: 1,
      risk: { level: 'ordinary' },
      approvals: { count: 0, summary: '0 of 1 approval' },
    });
    const [change] = await w.t.fx.svc.deps.sql<Array<{ subject: Record<string, unknown> }>>`
      select subject from audit_log where event = 'review.edited' and subject->>'request_id' = ${r.id}`;
    expect(change?.subject).toMatchObject({
      before: { risk_level: 'large', reviews_required: 2 },
      after: { risk_level: 'ordinary', reviews_required: 1 },
    });
  });

  it('an approver role: a member cannot approve a DDL that asks for admins; an admin can', async () => {
    const res = await w.patch({ risk_reviews: { ddl: { reviews_required: 1, approver_role: 'admin' } } });
    expect(res.status).toBe(200);
    const r = await w.submit('create table risk_role (id int)');
    expect(r.approvals).toMatchObject({ required: 1, approver_role: 'admin', summary: '0 of 1 approval' });
    const [entry] = await w.t.fx.svc.deps.sql<Array<{ detail: string }>>`
      select detail from audit_log where request_id = ${r.id} and outcome = 'pending'`;
    expect(entry?.detail).toMatch(/1 approval\(s\) from admins; risk ddl/);
    const refused = await w.approve('member1', r.id);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/admins/);
    expect((await w.get(r.id)).status).toBe('pending');
    expect((await w.run(r.id)).status).toBe(403);
    expect((await w.approve('admin1', r.id)).status).toBe(200);
    expect((await w.run(r.id)).status).toBe(200);
  });

  it('a level rule holds a write for review even on a credential without reviews', async () => {
    const res = await w.patch({ reviews_required: 0, risk_reviews: { no_where: { reviews_required: 1 } } });
    expect(res.status).toBe(200);
    const direct = await w.call('author', 'POST', '', {
      database_id: w.t.fx.databaseId,
      statement: "update orders set note = 'direct' where id = 1",
    });
    expect(direct.status).toBe(200);
    const r = await w.submit("update orders set note = 'all'");
    expect(r).toMatchObject({ reviews_required: 1, risk: { level: 'no_where' } });
    expect(r.risk?.why).toMatch(/no WHERE/);
  });

  it('bad input: negative N, an unknown level, a bad role → 422 naming the field, nothing changed', async () => {
    const before = (await w.database()).credentials[0];
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ large_write_rows: -1 }, 'credentials.0.large_write_rows'],
      [{ risk_reviews: { huge: { reviews_required: 3 } } }, 'credentials.0.risk_reviews.huge'],
      [
        { risk_reviews: { ddl: { reviews_required: 2, approver_role: 'owner' } } },
        'credentials.0.risk_reviews.ddl.approver_role',
      ],
      [
        { risk_reviews: { ddl: { reviews_required: -2 } } },
        'credentials.0.risk_reviews.ddl.reviews_required',
      ],
    ];
    for (const [fields, path] of cases) {
      const res = await w.patch(fields);
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as { errors: Array<{ path: string }> };
      expect(problem.errors.map((e) => e.path)).toContain(path);
    }
    expect((await w.database()).credentials[0]).toEqual(before);
  });

  it('the review inbox reads no write preview; the request page reads one and audits it', async () => {
    const { svc } = w.t.fx;
    const admin = await signIn(svc, svc.admin.email, svc.admin.password);
    expect((await w.patch({ reviews_required: 1, risk_reviews: {} })).status).toBe(200);
    const r = await w.submit("update orders set note = 'paged' where id = 1");
    const previews = async () =>
      Number(
        (
          await svc.deps.sql<Array<{ n: string }>>`
          select count(*) as n from audit_log where event = 'query_request.previewed'`
        )[0]?.n,
      );
    const before = await previews();
    const inbox = await svc.fetch('/reviews', { headers: { cookie: admin.cookie } });
    const list = await inbox.text();
    expect(list).toContain(r.id);
    expect(list).not.toContain('aria-label="Write preview"');
    expect(await previews()).toBe(before);
    const page = await svc.fetch(`/reviews/${r.id}`, { headers: { cookie: admin.cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Write preview"');
    expect(html).toMatch(/data-count="1"/);
    expect(await previews()).toBe(before + 1);
  });

  it('the credential form gives the same field errors as PATCH, and changes nothing', async () => {
    const { svc } = w.t.fx;
    const admin = await signIn(svc, svc.admin.email, svc.admin.password);
    const before = (await w.database()).credentials[0];
    const cases: Array<{ json: Record<string, unknown>; form: Record<string, string>; field: string }> = [
      { json: { large_write_rows: -1 }, form: { large_write_rows: '-1' }, field: 'large_write_rows' },
      {
        json: { risk_reviews: { huge: { reviews_required: 3 } } },
        form: { 'risk_reviews.huge.reviews_required': '3' },
        field: 'risk_reviews.huge',
      },
      {
        json: { risk_reviews: { ddl: { reviews_required: 2, approver_role: 'owner' } } },
        form: { 'risk_reviews.ddl.reviews_required': '2', 'risk_reviews.ddl.approver_role': 'owner' },
        field: 'risk_reviews.ddl.approver_role',
      },
    ];
    for (const c of cases) {
      const res = await w.patch(c.json);
      expect(res.status).toBe(422);
      const rest = ((await res.json()) as { errors: Array<{ path: string; message: string }> }).errors.find(
        (e) => e.path === `credentials.0.${c.field}`,
      );
      expect(rest).toBeDefined();
      const page = await svc.fetch(`/databases/${w.t.fx.databaseId}/credentials/${w.credentialId}`, {
        method: 'POST',
        headers: { cookie: admin.cookie },
        body: new URLSearchParams({ _csrf: admin.csrf, username: String(before?.username), ...c.form }),
        redirect: 'manual',
      });
      expect(page.status).toBe(422);
      const html = await page.text();
      const shown =
        new RegExp(`id="f-${w.credentialId}-${c.field.replaceAll('.', '\\.')}-error">([^<]*)<`).exec(
          html,
        )?.[1] ??
        new RegExp(`data-field="${c.field.replaceAll('.', '\\.')}">[^:]*: ([^<]*)<`).exec(html)?.[1];
      expect(shown).toBe(rest?.message);
    }
    expect((await w.database()).credentials[0]).toEqual(before);
  });
});

describe('risk levels on MariaDB', () => {
  const w = world(startMariadbTarget);
  beforeAll(() => w.setUp(), 120_000);
  afterAll(async () => w.t?.stop());

  it('DDL needs 2 approvals: 1 is not enough to run, the 2nd makes it runnable', async () => {
    const res = await w.patch({ reviews_required: 1, risk_reviews: { ddl: { reviews_required: 2 } } });
    expect(res.status).toBe(200);
    const r = await w.submit('create table risk_ddl (id int)');
    expect(r).toMatchObject({ reviews_required: 2, risk: { level: 'ddl' } });
    expect((await w.approve('member1', r.id)).status).toBe(200);
    expect((await w.get(r.id)).approvals.summary).toBe('1 of 2 approvals');
    expect((await w.run(r.id)).status).toBe(403);
    expect((await w.approve('admin1', r.id)).status).toBe(200);
    const ran = await w.run(r.id);
    expect(ran.status, await ran.clone().text()).toBe(200);
  });
});
