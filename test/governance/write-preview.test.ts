// Write preview for reviewers through GET /api/v1/desk/query-requests/{id}, on the real servers:
// the exact count and the rows before and after, read with the reader's own rights and masked by
// the reader's own policy; DDL shows the current definition; a slow preview says it timed out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WritePreview } from '../../governance/preview/index.ts';
import { createPersonalToken, createUser } from '../../identity/manage.ts';
import { firstOrganization } from '../../store/users.ts';
import { signIn } from '../helpers/service.ts';
import { SECRETS } from './protection-fixture.ts';
import { startMariadbTarget, startPostgresTarget, type Target } from './protection-targets.ts';

const MASKED_PASSWORD = 'masked reviewer password 1';

const ENGINES = [
  { name: 'PostgreSQL', start: startPostgresTarget, sleep: 'pg_sleep(3) is not null' },
  { name: 'MariaDB', start: startMariadbTarget, sleep: 'sleep(3) = 0' },
] as const;

describe.each(ENGINES)('write preview on $name', ({ start, sleep }) => {
  let t: Target;
  const tokens: Record<'author' | 'admin' | 'masked', string> = { author: '', admin: '', masked: '' };
  let credentialId: string;

  beforeAll(async () => {
    t = await start();
    const { svc } = t.fx;
    const org = (await firstOrganization(svc.deps.sql))!;
    const token = async (userId: string) =>
      (await createPersonalToken(svc.deps.sql, { userId, name: 't', expiresAt: null })).secret;
    const person = async (email: string, role: 'member' | 'admin', password: string | null = null) =>
      (await createUser(svc.deps.sql, { orgId: org.id, email, role, password })).id;
    // The author and the masked reviewer are members (the fixture's policy); the admin has none.
    tokens.author = await token(await person('author@example.test', 'member'));
    tokens.masked = await token(await person('masked@example.test', 'member', MASKED_PASSWORD));
    tokens.admin = await token(await person('reviewer@example.test', 'admin'));
    const res = await svc.fetch(`/api/v1/desk/databases/${t.fx.databaseId}`, {
      headers: { 'x-api-key': svc.apiKey },
    });
    credentialId = ((await res.json()) as { credentials: Array<{ id: string }> }).credentials[0]!.id;
    await patch({ reviews_required: 1, timeout: 1 });
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
  async function submit(who: keyof typeof tokens, statement: string): Promise<string> {
    const res = await t.fx.svc.fetch('/api/v1/desk/query-requests', {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ database_id: t.fx.databaseId, statement }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    return ((await res.json()) as { request: { id: string } }).request.id;
  }
  async function preview(who: keyof typeof tokens, id: string): Promise<WritePreview> {
    const res = await t.fx.svc.fetch(`/api/v1/desk/query-requests/${id}`, {
      headers: { authorization: `Bearer ${tokens[who]}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { preview: WritePreview }).preview;
  }

  it('UPDATE: exact count, before and after rows; an unprotected reviewer sees the values', async () => {
    const id = await submit('author', "update users set name = 'renamed' where id <= 2");
    const p = await preview('admin', id);
    expect(p).toMatchObject({ status: 'rows', verb: 'UPDATE', count: 2, assigned: ['name'] });
    const col = (c: string) => p.columns.indexOf(c);
    const sorted = (rows: unknown[][]) =>
      [...rows].sort((a, b) => Number(a[col('id')]) - Number(b[col('id')]));
    expect(sorted(p.before).map((r) => r[col('name')])).toEqual(['user1', 'user2']);
    expect(sorted(p.after).map((r) => r[col('name')])).toEqual(['renamed', 'renamed']);
    expect(sorted(p.before).map((r) => r[col('email')])).toEqual(SECRETS.emails.slice(0, 2));
    expect(Date.now() - Date.parse(p.computed_at)).toBeLessThan(60_000);
    // The preview and its risk level are in the hash-chained audit log with the request.
    const events = await t.fx.svc.deps.sql<Array<{ detail: string; subject: Record<string, unknown> }>>`
      select detail, subject from audit_log where event = 'query_request.previewed' and subject->>'request_id' = ${id}`;
    expect(events.at(-1)?.subject).toMatchObject({ count: 2, risk: 'ordinary', status: 'rows' });
    const submitted = await t.fx.svc.deps.sql<Array<{ detail: string }>>`
      select detail from audit_log where outcome = 'pending' and statement like 'update users set name%' order by seq desc limit 1`;
    expect(submitted[0]?.detail).toMatch(/risk ordinary/);
    // Nothing was written.
    expect(await t.fx.attempt('select name from users where id = 1', [], t.fx.unprotected)).toMatchObject({
      rows: [['user1']],
    });
  });

  it('a reviewer under a policy sees the same rows masked by their own policy', async () => {
    const id = await submit('admin', "update users set name = 'renamed' where id <= 2");
    const p = await preview('masked', id);
    expect(p).toMatchObject({ status: 'rows', count: 2 });
    const text = JSON.stringify(p);
    for (const s of [...SECRETS.emails, ...SECRETS.ssns, ...SECRETS.phones]) expect(text).not.toContain(s);
    expect(p.before.map((r) => r[p.columns.indexOf('email')])).toEqual(['****', '****']);
    // On the request's page the cells the policy hides or masks say so, never a bare null.
    const session = await signIn(t.fx.svc, 'masked@example.test', MASKED_PASSWORD);
    const page = await (
      await t.fx.svc.fetch(`/reviews/${id}`, { headers: { cookie: session.cookie } })
    ).text();
    const card = page.slice(page.indexOf('aria-label="Write preview"'));
    expect(card).toContain('data-protection="hidden"');
    expect(card).toContain('data-protection="masked"');
    expect(card).not.toMatch(/<td class="muted">null<\/td>/);
  });

  it('DELETE shows the rows it would remove; DDL the current definition', async () => {
    const del = await preview('admin', await submit('author', 'delete from orders where total >= 20'));
    expect(del).toMatchObject({ status: 'rows', verb: 'DELETE', count: 2, after: [] });
    expect(del.before).toHaveLength(2);
    const ddl = await preview('admin', await submit('author', 'alter table orders add column flag int'));
    expect(ddl.status).toBe('definition');
    expect(ddl.risk.level).toBe('ddl');
    const all = await preview('admin', await submit('author', "update orders set note = 'all'"));
    expect(all.risk).toMatchObject({ level: 'no_where', why: expect.stringMatching(/no WHERE/) });
    expect(ddl.definition[0]!.columns.map((c) => c.name)).toContain('user_id');
  });

  it("a preview that outlasts the credential's statement timeout says so; the request can still be reviewed", async () => {
    const id = await submit('admin', `update orders set note = 'slow' where ${sleep}`);
    const p = await preview('admin', id);
    expect(p.status).toBe('timeout');
    expect(p.note).toMatch(/timeout/);
  });
});
