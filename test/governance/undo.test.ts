// Undo of an approved write through the REST API and the reviews page, on the real PostgreSQL and
// MariaDB: the rows an approved UPDATE or DELETE touches are kept in its transaction, Undo opens a
// new request with the inverse statement, which is reviewed and run like any write and puts the
// exact rows back. Limits (too many rows, no primary key) are said before approval, and no kept
// value reaches anyone: not a statement, a request, a preview, the page or the audit log.
import { mkdir } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { pruneBackups } from '../../store/request-backups.ts';
import { firstOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { callTool, mcpClient } from '../mcp/target.ts';
import { connect } from '../oauth/flow.ts';
import { SECRETS } from './protection-fixture.ts';
import { startMariadbTarget, startPostgresTarget, type Target } from './protection-targets.ts';

const PASSWORD = 'a long test passphrase 42';
const SHOTS = 'test-output/undo';

const ENGINES = [
  {
    name: 'PostgreSQL',
    start: startPostgresTarget,
    kinds: `create table kinds (id int primary key, at timestamp(6), amount numeric(20,6), bin bytea, nul text, doc jsonb)`,
    rows: `insert into kinds values
      (1, '2024-05-06 07:08:09.123456', 12345678901234.123456, '\\x00ff10', null, '{"a": [1, 2.50]}'),
      (2, '1999-12-31 23:59:59.999999', -0.000001, '\\x', 'two', null),
      (3, '2000-01-01 00:00:00', 3, null, 'three', '"s"')`,
    nokey: 'create table nokey (a int, b text)',
  },
  {
    name: 'MariaDB',
    start: startMariadbTarget,
    kinds: `create table kinds (id int primary key, at datetime(6), amount decimal(20,6), bin varbinary(20), nul varchar(10), doc longtext)`,
    rows: `insert into kinds values
      (1, '2024-05-06 07:08:09.123456', 12345678901234.123456, X'00FF10', NULL, '{"a": [1, 2.50]}'),
      (2, '1999-12-31 23:59:59.999999', -0.000001, X'', 'two', NULL),
      (3, '2000-01-01 00:00:00', 3, NULL, 'three', '"s"')`,
    nokey: 'create table nokey (a int, b varchar(10))',
  },
] as const;

type Who = 'author' | 'reviewer' | 'masked';
interface ApiRequest {
  id: string;
  status: string;
  statement: string;
  params: unknown;
  undo_of: string | null;
  preview?: { count: number | null; note: string | null; undo?: { available: boolean; note: string | null } };
  undo?: { available: boolean; rows: number | null; note: string | null };
}

describe.each(ENGINES)('undo on $name', (engine) => {
  let t: Target;
  const tokens: Record<Who, string> = { author: '', reviewer: '', masked: '' };
  let credentialId: string;
  const sessions: Partial<Record<Who, { cookie: string; csrf: string }>> = {};

  beforeAll(async () => {
    t = await engine.start();
    const { svc } = t.fx;
    const org = (await firstOrganization(svc.deps.sql))!;
    const token = async (userId: string) =>
      (await createPersonalToken(svc.deps.sql, { userId, name: 't', expiresAt: null })).secret;
    const person = async (email: string, role: 'member' | 'admin') =>
      (await createUser(svc.deps.sql, { orgId: org.id, email, role, password: PASSWORD })).id;
    tokens.author = await token(await person('author@example.test', 'admin'));
    tokens.reviewer = await token(await person('reviewer@example.test', 'admin'));
    // A member: the fixture's policy masks users.email, hashes ssn, shows part of phone.
    tokens.masked = await token(await person('masked@example.test', 'member'));
    sessions.author = await signIn(svc, 'author@example.test', PASSWORD);
    sessions.masked = await signIn(svc, 'masked@example.test', PASSWORD);
    for (const s of [engine.kinds, engine.rows, engine.nokey, 'insert into nokey values (1, null)'])
      expect(await t.fx.attempt(s, [], t.fx.unprotected)).not.toHaveProperty('refused');
    const res = await svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      headers: { 'x-api-key': svc.apiKey },
    });
    credentialId = ((await res.json()) as { credentials: Array<{ id: string }> }).credentials[0]!.id;
    await patch({ reviews_required: 1 });
  }, 120_000);
  afterAll(async () => t?.stop());

  async function patch(fields: Record<string, unknown>) {
    const res = await t.fx.svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': t.fx.svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: [{ id: credentialId, ...fields }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  async function call(who: Who, method: string, path: string, body?: unknown): Promise<Response> {
    return t.fx.svc.fetch(`/api/v1/desk/query-requests${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
  async function submit(statement: string): Promise<string> {
    const res = await call('author', 'POST', '', { database_id: t.fx.databaseId, statement });
    expect(res.status, await res.clone().text()).toBe(202);
    return ((await res.json()) as { request: { id: string } }).request.id;
  }
  async function get(who: Who, id: string): Promise<ApiRequest> {
    const res = await call(who, 'GET', `/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as ApiRequest;
  }
  /** Approved by the reviewer, run by the author. */
  async function approveAndRun(id: string): Promise<void> {
    expect((await call('reviewer', 'POST', `/${id}/approve`, {})).status).toBe(200);
    const ran = await call('author', 'POST', `/${id}/run`, {});
    expect(ran.status, await ran.clone().text()).toBe(200);
  }
  async function undo(who: Who, id: string): Promise<Response> {
    return call(who, 'POST', `/${id}/undo`, {});
  }
  const table = async (sql: string) => {
    const r = await t.fx.attempt(sql, [], t.fx.unprotected);
    if (!('rows' in r)) throw new Error(JSON.stringify(r));
    return r.rows;
  };

  it('an approved UPDATE is kept, and its undo, approved and run, puts the exact rows back', async () => {
    const before = await table('select * from kinds order by id');
    const id = await submit(
      "update kinds set at = null, amount = 0, bin = null, nul = 'changed', doc = null where id <= 2",
    );
    const pending = await get('reviewer', id);
    expect(pending.preview?.undo).toMatchObject({ available: true });
    await approveAndRun(id);
    expect(await table('select nul from kinds where id <= 2 order by id')).toEqual([
      ['changed'],
      ['changed'],
    ]);
    const done = await get('author', id);
    expect(done).toMatchObject({ status: 'executed', undo: { available: true, rows: 2 } });
    // Kept sealed: the stored rows carry no value in clear; the audit says how many, not which.
    const [kept] = await t.fx.svc.deps.sql<Array<{ rows_enc: string; row_count: number }>>`
      select rows_enc, row_count from request_backups where request_id = ${id}`;
    expect(kept?.row_count).toBe(2);
    expect(kept?.rows_enc).toMatch(/^cs1\./);
    expect(kept?.rows_enc).not.toContain('12345678901234');
    const opened = await undo('author', id);
    expect(opened.status, await opened.clone().text()).toBe(201);
    const inverse = (await opened.json()) as ApiRequest;
    expect(inverse).toMatchObject({ status: 'pending', undo_of: id, params: [] });
    expect(inverse.statement).not.toMatch(/12345678901234|2024-05-06/);
    expect(inverse.preview).toMatchObject({ count: 2 });
    // Its statement is bound to the kept rows: it cannot be edited into one that reads them out.
    const edited = await call('author', 'PATCH', `/${inverse.id}`, { statement: 'select $1' });
    expect(edited.status).toBe(409);
    // A second undo of the same write is refused while this one is open.
    expect((await undo('author', id)).status).toBe(409);
    // Not run before its review: the rows are still changed.
    expect((await call('author', 'POST', `/${inverse.id}/run`, {})).status).toBe(403);
    await approveAndRun(inverse.id);
    expect(await table('select * from kinds order by id')).toEqual(before);
    const events = await t.fx.svc.deps.sql<Array<{ event: string; subject: Record<string, unknown> }>>`
      select event, subject from audit_log
       where event in ('query_request.backup_saved', 'query_request.undo_requested', 'query_request.undo_executed')
         and (subject->>'request_id' in (${id}, ${inverse.id}))
       order by seq`;
    expect(events.map((e) => e.event)).toEqual([
      'query_request.backup_saved',
      'query_request.undo_requested',
      'query_request.undo_executed',
    ]);
    expect(events[0]!.subject).toMatchObject({ rows: 2 });
    const audited = await t.fx.svc.deps.sql<Array<{ text: string }>>`
      select coalesce(statement, '') || coalesce(params::text, '') || coalesce(detail, '') as text
        from audit_log where subject->>'request_id' = ${inverse.id} or request_id = ${inverse.id}`;
    for (const a of audited) expect(a.text).not.toMatch(/12345678901234|2024-05-06/);
    expect((await get('author', id)).undo).toMatchObject({ available: false, undone_by: inverse.id });
  });

  it('an approved DELETE is undone by inserting the exact rows again', async () => {
    const before = await table('select * from kinds order by id');
    const id = await submit('delete from kinds where id >= 2');
    await approveAndRun(id);
    expect(await table('select id from kinds')).toEqual([[1]]);
    const opened = await undo('author', id);
    expect(opened.status, await opened.clone().text()).toBe(201);
    const inverse = (await opened.json()) as ApiRequest;
    await approveAndRun(inverse.id);
    expect(await table('select * from kinds order by id')).toEqual(before);
  });

  it('above the credential limit, undo is unavailable before approval and the write runs without it', async () => {
    await patch({ undo_max_rows: 1 });
    try {
      const id = await submit("update kinds set nul = 'many' where id <= 2");
      const p = await get('reviewer', id);
      expect(p.preview?.undo).toMatchObject({
        available: false,
        note: expect.stringMatching(/undo unavailable.*at most 1/),
      });
      await approveAndRun(id);
      expect(await table("select id from kinds where nul = 'many' order by id")).toEqual([[1], [2]]);
      expect((await get('author', id)).undo).toMatchObject({ available: false });
      expect((await undo('author', id)).status).toBe(409);
      // Reviewers saw undo available; the write grew past the limit before it ran: it is not run.
      await table("update kinds set nul = 'one' where id <= 2");
      const grown = await submit("update kinds set nul = 'grown' where nul = 'many'");
      expect((await get('reviewer', grown)).preview?.undo).toMatchObject({ available: true });
      await table("update kinds set nul = 'many' where id <= 2");
      expect((await call('reviewer', 'POST', `/${grown}/approve`, {})).status).toBe(200);
      const ran = await call('author', 'POST', `/${grown}/run`, {});
      expect(ran.status).toBeGreaterThanOrEqual(400);
      expect(await ran.text()).toMatch(/more than 1 rows/);
      expect(await table("select id from kinds where nul = 'grown'")).toEqual([]);
    } finally {
      await patch({ undo_max_rows: 10000 });
    }
  });

  it('the reviews page offers Undo on an executed write, and pressing it opens the inverse request', async () => {
    const id = await submit("update kinds set nul = 'paged' where id = 1");
    await approveAndRun(id);
    const { cookie, csrf } = sessions.author!;
    const page = await (await t.fx.svc.fetch('/reviews', { headers: { cookie } })).text();
    expect(page).toContain(`id="undo-${id}"`);
    expect(page).toContain(`action="/reviews/${id}/undo"`);
    const pressed = await t.fx.svc.fetch(`/reviews/${id}/undo`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    });
    expect(pressed.status).toBe(303);
    const notice = decodeURIComponent(pressed.headers.get('location') ?? '');
    const opened = /Opened (qr_\w+)/.exec(notice)?.[1];
    expect(opened, notice).toBeDefined();
    expect(await get('reviewer', opened!)).toMatchObject({ undo_of: id, status: 'pending' });
    await approveAndRun(opened!);
    expect(await table('select nul from kinds where id = 1')).not.toEqual([['paged']]);
  });

  it('in Chromium, pressing Undo on the reviews page opens the inverse request', async () => {
    const id = await submit("update kinds set nul = 'browser' where id = 2");
    await approveAndRun(id);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking'],
    });
    try {
      const context = await browser.newContext();
      const [name, value] = sessions.author!.cookie.split('=') as [string, string];
      await context.addCookies([{ name, value, url: t.fx.svc.url }]);
      const page = await context.newPage();
      await page.goto(`${t.fx.svc.url}/reviews`);
      const card = page.locator(`#undo-${id}`);
      await expect.poll(() => card.count()).toBe(1);
      await mkdir(SHOTS, { recursive: true });
      await card.screenshot({ path: `${SHOTS}/undo-offer-${engine.name}.png` });
      await card.getByRole('button', { name: 'Undo' }).click();
      await page.waitForURL(/notice=/);
      const notice = (await page.locator('[role=status], .notice').first().textContent()) ?? '';
      const opened = /Opened (qr_\w+)/.exec(notice)?.[1];
      expect(opened, notice).toBeDefined();
      await page.locator(`#${opened}`).screenshot({ path: `${SHOTS}/undo-request-${engine.name}.png` });
      expect(await get('reviewer', opened!)).toMatchObject({ undo_of: id, status: 'pending' });
    } finally {
      await browser.close();
    }
  });

  it('kept rows past their retention cannot be put back, and the sweep deletes them', async () => {
    const id = await submit("update kinds set nul = 'kept' where id = 3");
    await approveAndRun(id);
    expect((await get('author', id)).undo).toMatchObject({ available: true, rows: 1 });
    const sql = t.fx.svc.deps.sql;
    // The retention ends (COUNTERSIGN_UNDO_RETENTION_DAYS): as if its days had passed.
    await sql`update request_backups set expires_at = now() - interval '1 second' where request_id = ${id}`;
    expect((await get('author', id)).undo).toMatchObject({ available: false });
    expect((await undo('author', id)).status).toBe(409);
    expect(await pruneBackups(sql)).toBeGreaterThanOrEqual(1);
    expect(await sql`select 1 from request_backups where request_id = ${id}`).toHaveLength(0);
  });

  it('a table without a primary key: undo unavailable, said before approval', async () => {
    const id = await submit("update nokey set b = 'y' where a = 1");
    const p = await get('reviewer', id);
    expect(p.preview?.undo).toMatchObject({
      available: false,
      note: expect.stringMatching(/no primary key/),
    });
    await approveAndRun(id);
    expect((await get('author', id)).undo).toMatchObject({ available: false });
    expect((await undo('author', id)).status).toBe(409);
  });

  it('a member under a policy never sees a kept protected value: REST, the page, the undo request', async () => {
    const id = await submit("update users set name = 'renamed' where id <= 3");
    await approveAndRun(id);
    const opened = await undo('author', id);
    expect(opened.status, await opened.clone().text()).toBe(201);
    const inverse = (await opened.json()) as ApiRequest;
    const seen: string[] = [];
    for (const rid of [id, inverse.id]) seen.push(await (await call('masked', 'GET', `/${rid}`)).text());
    seen.push(await (await call('masked', 'GET', '?limit=50')).text());
    seen.push(await (await call('masked', 'GET', '/inbox')).text());
    // The member may ask for an undo too; whatever the answer, it holds no kept value.
    seen.push(await (await undo('masked', id)).text());
    // The same member as an AI client (MCP get_query_request), on a database open to AI.
    const open = await t.fx.svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': t.fx.svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ ai_enabled: true, credentials: [{ id: credentialId, ai_allowed: true }] }),
    });
    expect(open.status, await open.clone().text()).toBe(200);
    const { tokens: oauth } = await connect(t.fx.svc, { email: 'masked@example.test', password: PASSWORD });
    const mcp = await mcpClient(t.fx.svc, oauth.access_token);
    try {
      for (const rid of [id, inverse.id]) {
        const got = await callTool(mcp, 'get_query_request', { request_id: rid });
        expect(got.isError, got.text).toBe(false);
        seen.push(got.text, JSON.stringify(got.data));
      }
    } finally {
      await mcp.close();
    }
    const page = await t.fx.svc.fetch('/reviews', { headers: { cookie: sessions.masked!.cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    // The undo waits for this member's review: its card is on the page, with the count only.
    expect(html).toContain(inverse.id);
    seen.push(html);
    const all = seen.join('\n');
    expect(all).toContain(inverse.id);
    for (const s of [...SECRETS.emails, ...SECRETS.ssns, ...SECRETS.phones]) expect(all).not.toContain(s);
    // The inverse still runs with the exact values.
    await approveAndRun(inverse.id);
    expect(await table('select name, email from users order by id')).toEqual(
      SECRETS.emails.map((e, i) => [`user${i + 1}`, e]),
    );
  });
});

describe.each(ENGINES)('undo by a member under a policy on $name', (engine) => {
  let t: Target;
  const tokens: Record<Who, string> = { author: '', reviewer: '', masked: '' };
  const leaks = [...SECRETS.emails, ...SECRETS.ssns, ...SECRETS.phones];

  beforeAll(async () => {
    t = await engine.start();
    const { svc } = t.fx;
    const org = (await firstOrganization(svc.deps.sql))!;
    for (const [who, role] of [
      ['author', 'admin'],
      ['reviewer', 'admin'],
      ['masked', 'member'],
    ] as const) {
      const { id } = await createUser(svc.deps.sql, {
        orgId: org.id,
        email: `${who}@example.test`,
        role,
        password: PASSWORD,
      });
      tokens[who] = (
        await createPersonalToken(svc.deps.sql, { userId: id, name: 't', expiresAt: null })
      ).secret;
    }
    const res = await svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      headers: { 'x-api-key': svc.apiKey },
    });
    const credentialId = ((await res.json()) as { credentials: Array<{ id: string }> }).credentials[0]!.id;
    const patched = await svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': svc.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: [{ id: credentialId, reviews_required: 1 }] }),
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    // Users are deleted here: no order may refer to them.
    expect(await t.fx.attempt('delete from orders', [], t.fx.unprotected)).not.toHaveProperty('refused');
  }, 120_000);
  afterAll(async () => t?.stop());

  async function call(who: Who, method: string, path: string, body?: unknown): Promise<Response> {
    return t.fx.svc.fetch(`/api/v1/desk/query-requests${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
  /** Submitted by `who`, approved by the reviewer, run by `who`: the run's answer. */
  async function approved(who: Who, statement: string): Promise<string> {
    const res = await call(who, 'POST', '', { database_id: t.fx.databaseId, statement });
    expect(res.status, await res.clone().text()).toBe(202);
    const id = ((await res.json()) as { request: { id: string } }).request.id;
    expect((await call('reviewer', 'POST', `/${id}/approve`, {})).status).toBe(200);
    return id;
  }
  const rows = async (sql: string) => {
    const r = await t.fx.attempt(sql, [], t.fx.unprotected);
    if (!('rows' in r)) throw new Error(JSON.stringify(r));
    return r.rows;
  };

  it('opens and runs the undo of a DELETE of rows with protected values: the exact rows come back, no value reaches them', async () => {
    const before = await rows('select * from users order by id');
    const id = await approved('masked', 'delete from users where id = 3');
    expect((await call('masked', 'POST', `/${id}/run`, {})).status).toBe(200);
    expect(await rows('select id from users order by id')).toEqual([[1], [2]]);
    // Their policy reads the inverse statement as any write: it matches rows by id (shown) and
    // writes back email, ssn and phone without reading them.
    const opened = await call('masked', 'POST', `/${id}/undo`, {});
    const body = await opened.text();
    expect(opened.status, body).toBe(201);
    const inverse = JSON.parse(body) as ApiRequest;
    expect((await call('reviewer', 'POST', `/${inverse.id}/approve`, {})).status).toBe(200);
    const ran = await call('masked', 'POST', `/${inverse.id}/run`, {});
    const ranText = await ran.text();
    expect(ran.status, ranText).toBe(200);
    expect(await rows('select * from users order by id')).toEqual(before);
    const seen = [body, ranText, await (await call('masked', 'GET', `/${inverse.id}`)).text()].join('\n');
    expect(seen).toContain(inverse.id);
    for (const s of leaks) expect(seen).not.toContain(s);
  });

  it('an undo the database refuses does not quote a kept value in its error, to anyone', async () => {
    // A unique protected column, and a row that takes the deleted row's value meanwhile: putting
    // the row back fails on it, and MariaDB's message would quote the value.
    await rows('create unique index users_ssn_unique on users (ssn)');
    const id = await approved('author', 'delete from users where id = 2');
    expect((await call('author', 'POST', `/${id}/run`, {})).status).toBe(200);
    await rows(`insert into users (id, email, ssn) values (42, 'taken@example.test', '${SECRETS.ssns[1]}')`);
    const opened = await call('author', 'POST', `/${id}/undo`, {});
    expect(opened.status, await opened.clone().text()).toBe(201);
    const inverse = (await opened.json()) as ApiRequest;
    expect((await call('reviewer', 'POST', `/${inverse.id}/approve`, {})).status).toBe(200);
    const ran = await call('author', 'POST', `/${inverse.id}/run`, {});
    expect(ran.status).not.toBe(200);
    const seen = [await ran.text()];
    for (const who of ['author', 'masked'] as const)
      seen.push(await (await call(who, 'GET', `/${inverse.id}`)).text());
    const audited = await t.fx.svc.deps.sql<Array<{ text: string }>>`
      select coalesce(detail, '') as text from audit_log where request_id = ${inverse.id}`;
    seen.push(...audited.map((a) => a.text));
    const all = seen.join('\n');
    expect(all).toMatch(/failed/);
    for (const s of leaks) expect(all).not.toContain(s);
  });

  it('a write that fails after its rows were read keeps nothing, and says nothing was kept', async () => {
    // The read meets row 42; the write then fails on the unique ssn (users_ssn_unique, above).
    const id = await approved('author', `update users set ssn = '${SECRETS.ssns[0]}' where id = 42`);
    const ran = await call('author', 'POST', `/${id}/run`, {});
    expect(ran.status, await ran.clone().text()).not.toBe(200);
    const kept = await t.fx.svc.deps.sql`select 1 from request_backups where request_id = ${id}`;
    expect(kept).toHaveLength(0);
    const saved = await t.fx.svc.deps.sql`
      select 1 from audit_log where event = 'query_request.backup_saved' and subject->>'request_id' = ${id}`;
    expect(saved).toHaveLength(0);
    expect((await call('author', 'POST', `/${id}/undo`, {})).status).toBe(409);
  });

  it('an UPDATE keeps only what its undo needs: the key and the columns it sets, no other value', async () => {
    const id = await approved('author', "update users set name = 'renamed' where id = 1");
    expect((await call('author', 'POST', `/${id}/run`, {})).status).toBe(200);
    const [b] = await t.fx.svc.deps.sql<Array<{ rows_enc: string }>>`
      select rows_enc from request_backups where request_id = ${id}`;
    const doc = t.fx.svc.deps.keyring.decrypt(b!.rows_enc, `request-backup:${id}`);
    const rowsKept = JSON.parse(doc) as Array<Record<string, unknown>>;
    expect(rowsKept).toHaveLength(1);
    expect(Object.keys(rowsKept[0]!)).toHaveLength(2);
    // PostgreSQL keeps values by name, MariaDB the hex of each value.
    const name = engine.name === 'MariaDB' ? Buffer.from('user1').toString('hex').toUpperCase() : 'user1';
    expect(doc).toContain(name);
    for (const s of [...leaks, Buffer.from(SECRETS.emails[0]!).toString('hex').toUpperCase()])
      expect(doc).not.toContain(s);
  });
});
